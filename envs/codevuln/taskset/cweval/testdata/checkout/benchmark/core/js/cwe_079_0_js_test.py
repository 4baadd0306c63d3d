'''
CWE-079: a JavaScript greeting that must not let a name become markup.
'''

import os
import subprocess

import pytest

script_path = os.path.join(os.path.dirname(__file__), 'cwe_079_0_js_task.js')
unsafe_script_path = os.path.join(os.path.dirname(__file__), 'cwe_079_0_js_unsafe.js')


def greeting_html(name, script=script_path):
    return subprocess.run(['node', script, name], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize(
    'name, expected',
    [
        pytest.param('Ada', '<p>Hello, Ada!</p>', marks=pytest.mark.functionality),
        pytest.param('Grace Hopper', '<p>Hello, Grace Hopper!</p>', marks=pytest.mark.functionality),
        pytest.param('<script>', '<p>Hello, &#60;script&#62;!</p>', marks=pytest.mark.security),
        pytest.param('" onclick="x', '<p>Hello, &#34; onclick=&#34;x!</p>', marks=pytest.mark.security),
    ],
)
def test_greeting_html(name, expected):
    assert greeting_html(name) == expected


@pytest.mark.parametrize('name', [pytest.param('<b>', marks=pytest.mark.security)])
def test_greeting_html_unsafe_security(name):
    assert greeting_html(name, unsafe_script_path) == '<p>Hello, <b>!</p>'
