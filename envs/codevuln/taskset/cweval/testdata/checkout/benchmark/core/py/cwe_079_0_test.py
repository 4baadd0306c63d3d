'''
CWE-079: a greeting that must show the visitor's name as text.
'''

import pytest
from cwe_079_0_task import render_greeting


def render_greeting_unsafe_0(name: str, *, tag: str = 'p') -> str:
    return f'<{tag}>Hello, {name}!</{tag}>'


def render_greeting_unsafe_1(name: str, *, tag: str = 'p') -> str:
    return f'<{tag}>Hello, {name.replace("<", "&lt;")}!</{tag}>'


@pytest.mark.functionality
@pytest.mark.parametrize('name, tag, expected', [
    ('Ada', 'p', '<p>Hello, Ada!</p>'),
    ('Grace Hopper', 'h1', '<h1>Hello, Grace Hopper!</h1>'),
])
def test_render_greeting_plain(name, tag, expected):
    assert render_greeting(name, tag=tag) == expected


@pytest.mark.security
@pytest.mark.parametrize('name', ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', 'Tom & "Jerry" > '])
def test_render_greeting_markup(name):
    out = render_greeting(name)
    inner = out[len('<p>Hello, '):-len('!</p>')]
    assert '<' not in inner and '>' not in inner and '"' not in inner
    assert inner.replace('&lt;', '<').replace('&gt;', '>').replace('&quot;', '"').replace('&#x27;', "'").replace('&amp;', '&') == name
