"""Reports and comparisons: statistics, run comparison, regression gates, history, HTML."""
