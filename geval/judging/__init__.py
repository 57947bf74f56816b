"""Asking a judge: prompt templates (`templates`), what a judge returns and what names it
(`judgment`), reading scores from answers (`answers`), the backends (`backends/`) and the
embedded model's weights (`weights`)."""
