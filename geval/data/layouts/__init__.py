"""File layouts, each a module with NAME, detect(data) and load(path, data, name): a new
layout is one module here plus one line in LAYOUTS; a load may return a third value, the
categories of its categorical aspects. `table` is never detected: it reads any
table through a column mapping."""

from geval.data.layouts import annotations, dstc9, fed, seed001, summeval, usr

LAYOUTS = {module.NAME: module for module in (usr, fed, summeval, dstc9, seed001, annotations)}
