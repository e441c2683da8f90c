"""One chart as a self-contained HTML page (``flashback plot -o fig.html``), and the rule
for putting JSON inside ``<script>`` that every page flashback writes follows."""

from __future__ import annotations

import functools
import html
import json
import re

# what must not appear literally inside <script>: a closing tag or comment opener, and the
# two line separators JavaScript string literals do not allow
_SCRIPT_UNSAFE = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def script_json(value: object) -> str:
    """JSON for inlining inside ``<script>``: ``<``, ``>``, ``&`` and U+2028/9 are written as
    ``\\uXXXX`` escapes (the same value to JavaScript), so text such as ``</script>`` in a
    label cannot close the script element."""
    text = json.dumps(value)
    return re.sub("[<>&\u2028\u2029]", lambda m: _SCRIPT_UNSAFE[m.group()], text)


@functools.cache
def vega_bundle() -> str:
    """The Vega + Vega-Lite + Vega-Embed bundle as one script (assigns ``window.vegaEmbed``)."""
    import vl_convert as vlc

    # vl_convert's stub makes `snippet` required; the function defaults it to the snippet that
    # assigns window.vegaEmbed, which is what this page needs
    return vlc.javascript_bundle()  # type: ignore[call-arg]


def chart_page(spec: dict, *, title: str = "flashback chart") -> str:
    """An HTML page drawing the Vega-Lite ``spec`` with the Vega JavaScript inlined (opens
    with no network); the spec goes in through :func:`script_json`, so no text in the data
    (a step name ``</script><script>…``) can become markup or script."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(title)}</title>
<link rel="icon" href="data:,">
<script>{vega_bundle()}</script>
</head><body>
<div id="chart"></div>
<script>
vegaEmbed("#chart", {script_json(spec)}, {{renderer: "svg", actions: false}})
  .catch(e => console.error("chart failed: " + e));
</script>
</body></html>
"""
