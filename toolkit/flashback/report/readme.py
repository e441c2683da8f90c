"""The README's picture: the demo's main figure (Puget's CrystalDiskMark loop replayed on the
simulated Intel 520, write speed against data written), made offline by vl-convert.

``make readme-figure`` (or ``python -m flashback.report.readme [OUT_DIR]``) replays the loop
at the demo's scale and writes three files into ``data/readme/``:

- ``report-puget.png``: the picture the README shows (vl-convert, 2× pixel density);
- ``report-puget.vl.json``: the Vega-Lite spec it was drawn from (its data inline);
- ``report-puget.inputs.json``: the frames the spec was made from (``curves``, ``segments``,
  ``breakpoints``, ``published``) and the scale.

``tests/test_readme_figure.py`` holds the committed picture to what this module makes: the
spec must be what :func:`spec` makes from the stored inputs, and the PNG the size vl-convert
draws that spec at; under ``-m slow`` the inputs are replayed again at the stored scale.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import polars as pl

#: where the picture and its spec and inputs live, relative to the repository
DIR = Path("data/readme")
STEM = "report-puget"
#: PNG pixel density of the picture
PNG_SCALE = 2.0


def demo_scale() -> str:
    """The scale the demo replays Puget's loop at (``flashback report``)."""
    from flashback.replay.procedures import REVIEWS

    return next(r.scale for r in REVIEWS if r.name == "puget")


def replay_inputs(scale: str, *, progress: bool = False) -> dict[str, pl.DataFrame]:
    """Replays Puget's loop with incompressible and with compressible data on the simulated
    Intel 520 shrunk by ``scale`` and returns the figure's frames
    (:func:`flashback.report.reviews.puget.figure_inputs`).

    Raises:
        ParameterError: ``scale`` is not a scale the replay accepts.
    """
    from flashback.replay.api import replay
    from flashback.report.reviews import puget
    from flashback.report.reviews.common import sim_target

    target = sim_target(puget.PRESET, scale)
    rnd, zer = (
        replay(puget.NAME, target=target, scale=scale, progress=progress, data=data)
        for data in ("random", "zeros")
    )
    return puget.figure_inputs(rnd, zer)


def inputs_to_json(inputs: dict[str, pl.DataFrame], *, scale: str) -> dict:
    """The frames as JSON (columns, dtypes, rows) with the scale they were replayed at."""
    return {
        "scale": scale,
        "frames": {
            name: {
                "schema": {c: str(t) for c, t in df.schema.items()},
                "rows": df.rows(),
            }
            for name, df in inputs.items()
        },
    }


def inputs_from_json(doc: dict) -> dict[str, pl.DataFrame]:
    """The frames :func:`inputs_to_json` wrote, with their dtypes."""
    types = {"String": pl.String, "Float64": pl.Float64, "Int64": pl.Int64, "Int32": pl.Int32}
    out = {}
    for name, f in doc["frames"].items():
        schema = {c: types[t] for c, t in f["schema"].items()}
        out[name] = pl.DataFrame(f["rows"], schema=schema, orient="row")
    return out


def spec(inputs: dict[str, pl.DataFrame]) -> dict:
    """The picture's Vega-Lite spec (theme applied, data inline) made from ``inputs``."""
    import altair as alt

    from flashback.figures._theme import THEME_NAME
    from flashback.report.reviews import puget

    with alt.theme.enable(THEME_NAME), alt.data_transformers.disable_max_rows():
        return json.loads(puget.main_figure(inputs).to_json())


def write(out_dir: str | os.PathLike[str] = DIR, *, scale: str | None = None) -> Path:
    """Replays at ``scale`` (default: the demo's), writes the PNG, its spec and its inputs
    into ``out_dir`` and returns the PNG's path.

    Raises:
        ParameterError: a bad ``scale``.
        SafetyError, DeviceError: as :func:`flashback._io.write_bytes`.
    """
    import vl_convert as vlc

    from flashback._io import write_bytes

    scale = scale or demo_scale()
    inputs = replay_inputs(scale)
    vl = spec(inputs)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    doc = inputs_to_json(inputs, scale=scale)
    write_bytes(out / f"{STEM}.inputs.json", (json.dumps(doc, indent=1) + "\n").encode(),
                overwrite=True)  # fmt: skip
    write_bytes(out / f"{STEM}.vl.json", (json.dumps(vl, indent=1) + "\n").encode(),
                overwrite=True)  # fmt: skip
    png = out / f"{STEM}.png"
    write_bytes(png, vlc.vegalite_to_png(vl, scale=PNG_SCALE), overwrite=True)
    return png


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    path = write(argv[0] if argv else DIR)
    print(f"README picture written to {path}")


if __name__ == "__main__":
    main()
