from urllib.parse import urlparse


def is_allowed_redirect(url: str, domain: str) -> bool:
    '''
    Tell whether a redirect target stays on the domain or one of its
    subdomains.

    Args:
        url (str): the redirect target, from the request.
        domain (str): the site's domain.

    Returns:
        bool: True when the target's host is the domain or ends with "." + domain.
    '''
    # BEGIN SOLUTION
    host = urlparse(url).hostname or ''
    return host == domain or host.endswith('.' + domain)
