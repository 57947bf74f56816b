"""What may be concluded with a judge: whether it can replace an annotator (`alttest`, with the
study it needs in `alttest_power`), and which items to label and what the labels buy (`labeling`)."""
