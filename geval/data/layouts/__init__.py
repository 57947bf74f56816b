"""File layouts, each a module with NAME, detect(data) and load(path, data, name): a new
layout is one module here plus one line in LAYOUTS; a load may return a third value, the
categories of its categorical aspects; SCALES, where its paper says on what scale each aspect
was asked ({aspect: (low, high)}). `table` is never detected: it reads any table through a
column mapping."""

from geval.data.layouts import annotations, dstc9, fed, pairs, seed001, summeval, usr

LAYOUTS = {module.NAME: module for module in (usr, fed, summeval, dstc9, seed001, annotations, pairs)}


def declared_scales(layout: str) -> dict[str, tuple[float, float]]:
    """The scale each aspect of a layout's files was asked on, where its paper says ({} else: a
    user's own table, the alternative annotator test's annotations)."""
    return dict(getattr(LAYOUTS.get(layout), "SCALES", {}))
