//! Exact PELT change-point search. (Placeholder; the analysis issue fills it in.)
