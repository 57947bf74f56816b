"""Raising agreement: a search over ways of asking the judge, judged on held-out groups."""
