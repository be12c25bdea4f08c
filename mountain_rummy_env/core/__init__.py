"""The rules core: state records (:mod:`.state`), static tables (:mod:`.spec`) and the
compiled rules over them (:mod:`.rules`). Adapters and variants build on this package."""
