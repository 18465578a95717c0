"""Page builders (pure): data in, Markdown/HTML out, each with its template under templates/."""
