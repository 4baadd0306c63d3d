def render_greeting(name: str, *, tag: str = 'p') -> str:
    '''
    Build the HTML greeting shown on a profile page: <tag>Hello, NAME!</tag>
    where NAME is what the visitor entered, shown as text.

    Args:
        name (str): the visitor's name.
        tag (str): the enclosing element, chosen by the page.

    Returns:
        str: the HTML fragment.
    '''
    # BEGIN SOLUTION
    import html

    return f'<{tag}>Hello, {html.escape(name, quote=True)}!</{tag}>'
