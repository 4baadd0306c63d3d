'''
CWE-020: a suite that never runs the function under test (it checks its own
copy, as one of the benchmark's suites does): the importer must refuse both
tasks it would make.
'''

from urllib.parse import urlparse

import pytest
from cwe_020_0_task import is_allowed_redirect  # noqa: F401


def is_allowed_redirect_unsafe(url: str, domain: str) -> bool:
    return domain in url


def _own_copy(url, domain):
    host = urlparse(url).hostname or ''
    return host == domain or host.endswith('.' + domain)


@pytest.mark.parametrize(
    'url, expected',
    [
        pytest.param('https://example.com/a', True, marks=pytest.mark.functionality),
        pytest.param('https://evil.com/?example.com', False, marks=pytest.mark.security),
    ],
)
def test_is_allowed_redirect(url, expected):
    assert _own_copy(url, 'example.com') == expected
