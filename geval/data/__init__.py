"""Datasets: what people scored. Items (`items`), files and their layouts (`dataset`,
`reading`, `layouts/`), and choosing items (`selection`)."""
