"""One module per review: run its replay on the review's simulated drive and build its
report section (figures, published-vs-replayed table, change points, steady state)."""
