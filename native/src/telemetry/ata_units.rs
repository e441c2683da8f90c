//! The units of ATA SMART write counters, keyed on (smartctl drive family, attribute id,
//! expected name). The table's one home is `toolkit/flashback/telemetry/ata_units.json`
//! (read there by the Python decoders), compiled in here; its rows cite their sources.

use serde::Deserialize;
use std::sync::OnceLock;

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct CounterUnit {
    pub family: String,
    pub attr_id: u32,
    pub name: String,
    pub quantity: String,
    /// Bytes per raw count; 0 = the drive's logical sector size.
    pub unit_bytes: u64,
    pub source: String,
}

#[derive(Deserialize)]
struct Table {
    units: Vec<CounterUnit>,
}

const TABLE_JSON: &str = include_str!("../../../toolkit/flashback/telemetry/ata_units.json");

/// Every row of the table.
pub fn units() -> &'static [CounterUnit] {
    static T: OnceLock<Vec<CounterUnit>> = OnceLock::new();
    T.get_or_init(|| {
        serde_json::from_str::<Table>(TABLE_JSON)
            .expect("ata_units.json is valid (tested)")
            .units
    })
}

/// `(bytes, unit_bytes)` of the `quantity` (`host`/`nand`) counter of a drive of `family`
/// whose attributes are `(id, name, raw)`, or the reason there is none. Several rows of
/// one quantity (WD's NAND TLC + SLC) are summed, their units added; a NAND total missing
/// one of its parts is refused (it would understate write amplification).
pub fn decode(
    family: Option<&str>,
    attrs: &[(u32, String, u64)],
    quantity: &str,
    sector_bytes: u64,
) -> Result<(u64, u64), String> {
    let what = if quantity == "nand" {
        "NAND-write"
    } else {
        "host-write"
    };
    let fam = family.map(str::trim).unwrap_or("");
    let rows: Vec<&CounterUnit> = units()
        .iter()
        .filter(|u| u.quantity == quantity && u.family == fam)
        .collect();
    if rows.is_empty() {
        return Err(format!(
            "no {what} counter unit known for drive family {fam:?}"
        ));
    }
    let (mut total, mut unit_sum, mut found, mut missing) = (0u64, 0u64, 0, vec![]);
    for u in rows {
        match attrs.iter().find(|a| a.0 == u.attr_id) {
            Some((_, name, raw)) if *name == u.name => {
                let unit = if u.unit_bytes == 0 {
                    sector_bytes
                } else {
                    u.unit_bytes
                };
                total = total.saturating_add(raw.saturating_mul(unit));
                unit_sum += unit;
                found += 1;
            }
            _ => missing.push(format!("{} {}", u.attr_id, u.name)),
        }
    }
    if found == 0 {
        return Err(format!(
            "drive family {fam:?} has no attribute {} here",
            missing.join(", ")
        ));
    }
    if !missing.is_empty() && quantity == "nand" {
        return Err(format!(
            "NAND counter incomplete: missing {}",
            missing.join(", ")
        ));
    }
    Ok((total, unit_sum))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_parses_and_keys_on_family_id_and_name() {
        assert!(units().len() >= 9);
        let fam = Some("Intel S4510/S4610/S4500/S4600 Series SSDs");
        let a = vec![
            (241, "Host_Writes_32MiB".to_string(), 7154),
            (243, "NAND_Writes_32MiB".to_string(), 57989),
        ];
        assert_eq!(decode(fam, &a, "host", 512), Ok((7154 << 25, 1 << 25)));
        assert_eq!(decode(fam, &a, "nand", 512), Ok((57989 << 25, 1 << 25)));
        let renamed = vec![(243, "Unknown_Attribute".to_string(), 5)];
        assert!(decode(fam, &renamed, "nand", 512)
            .unwrap_err()
            .contains("243"));
        assert!(decode(Some("Samsung based SSDs"), &a, "nand", 512)
            .unwrap_err()
            .contains("Samsung"));
        let s = vec![(241, "Total_LBAs_Written".to_string(), 10)];
        assert_eq!(
            decode(Some("Samsung based SSDs"), &s, "host", 4096),
            Ok((40960, 4096))
        );
    }
}
