"""Sign-up form validation."""
import re

# Each repetition consumes a separator first, so no two branches can match
# the same text: backtracking stays linear.
LOCAL = re.compile(r"[a-zA-Z0-9]+(?:[._+-][a-zA-Z0-9]+)*")
LABEL = re.compile(r"[a-zA-Z0-9](?:-?[a-zA-Z0-9])*")
TLD = re.compile(r"[a-zA-Z]{2,}")
USERNAME = re.compile(r"[a-zA-Z][a-zA-Z0-9._-]*")
# The original username rule: a separator may not follow another separator.
DOUBLE_SEP = re.compile(r"[._-][._-]")


def is_valid_email(s):
    if not isinstance(s, str) or len(s) > 254 or s.count("@") != 1:
        return False
    local, domain = s.split("@")
    if not LOCAL.fullmatch(local):
        return False
    labels = domain.split(".")
    if len(labels) < 2 or not TLD.fullmatch(labels[-1]):
        return False
    # The original rule needed every domain label to have at least 2 characters.
    return all(len(l) >= 2 and LABEL.fullmatch(l) for l in labels[:-1])


def is_valid_username(s):
    return (isinstance(s, str) and 3 <= len(s) <= 32 and USERNAME.fullmatch(s) is not None
            and DOUBLE_SEP.search(s) is None and not (len(s) > 1 and s[1] in "._-"))


def validate_signup(form):
    errors = {}
    if not is_valid_username(form.get("username", "")):
        errors["username"] = "3-32 letters, digits, '.', '-', '_', starting with a letter"
    if not is_valid_email(form.get("email", "")):
        errors["email"] = "not a valid e-mail address"
    if len(form.get("password", "")) < 10:
        errors["password"] = "at least 10 characters"
    return errors
