"""Memory: facts / self / goals with dedup, hierarchical summaries L1…Ln, topics, dual context.

Modules: scopes (who sees what), items (facts/self/goals), extraction (after-reply hook),
summaries (L1…Ln builder and hook), topics, context (dual context builder), service (the
bundle the composition root builds). See docs/memory.md.
"""
