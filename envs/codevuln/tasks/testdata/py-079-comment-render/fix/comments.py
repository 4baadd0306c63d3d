"""HTML rendering of blog comment threads."""
import html
import re
from urllib.parse import urlsplit

EMPHASIS = re.compile(r"\*([^*\n]+)\*")


def _paragraphs(text):
    blocks = [b.strip() for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]
    out = []
    for b in blocks:
        # Escape first, then add our own markup: user text can never open a tag.
        b = EMPHASIS.sub(r"<em>\1</em>", html.escape(b, quote=True))
        out.append("<p>%s</p>" % b.replace("\n", "<br>"))
    return "".join(out)


def _safe_url(site):
    parts = urlsplit(site.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return site.strip()


def _author(c):
    name = html.escape(c.get("author") or "anonymous", quote=True)
    site = _safe_url(c.get("website") or "")
    if site:
        return '<a href="%s" rel="nofollow">%s</a>' % (html.escape(site, quote=True), name)
    return "<span>%s</span>" % name


def render_comment(c):
    """c: dict with author, website (optional), date (YYYY-MM-DD) and text."""
    return '<article class="comment"><header>%s <time>%s</time></header>%s</article>' % (
        _author(c),
        html.escape(c.get("date", ""), quote=True),
        _paragraphs(c.get("text", "")),
    )


def render_thread(comments):
    items = "".join(render_comment(c) for c in comments)
    return '<section class="comments" data-count="%d">%s</section>' % (len(comments), items)
