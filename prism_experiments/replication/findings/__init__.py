"""One module per published finding: its source, arms, claims and how the harness measures them."""
