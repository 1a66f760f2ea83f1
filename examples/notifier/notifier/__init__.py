"""A tiny order notifier: a LangGraph graph that tells a customer their order has shipped."""
