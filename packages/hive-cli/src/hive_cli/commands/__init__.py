"""One module per command; each is imported only when its command runs, so ``hive --help`` stays fast."""

__all__: list[str] = []
