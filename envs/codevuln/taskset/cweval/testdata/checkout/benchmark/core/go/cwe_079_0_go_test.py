'''
CWE-079: a Go greeting that must not let a name become markup.
'''

import os
import subprocess

import pytest

task_name = os.path.splitext(os.path.basename(__file__))[0].split('_test')[0]
compiled_path = os.path.join(os.path.dirname(__file__), 'compiled', f'{task_name}_task')


def greeting_html(name):
    return subprocess.run([compiled_path, name], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize(
    'name, expected',
    [
        pytest.param('Ada', '<p>Hello, Ada!</p>', marks=pytest.mark.functionality),
        pytest.param('Grace Hopper', '<p>Hello, Grace Hopper!</p>', marks=pytest.mark.functionality),
        pytest.param('<script>alert(1)</script>', '<p>Hello, &lt;script&gt;alert(1)&lt;/script&gt;!</p>', marks=pytest.mark.security),
        pytest.param('"><img src=x onerror=alert(1)>', '<p>Hello, &#34;&gt;&lt;img src=x onerror=alert(1)&gt;!</p>', marks=pytest.mark.security),
    ],
)
def test_greeting_html(name, expected):
    assert greeting_html(name) == expected
