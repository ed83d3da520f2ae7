"""The blog's features, one module each; app.create_app puts them together."""
