"""Running a judge over items into the store: the loop (`runner`), what it looks up first
(`lookup`), its estimate (`plan`), rate limits (`limits`), generated evaluation steps
(`steps`) and the OpenAI Batch API (`batch`)."""
