"""Sign-up form validation."""
import re

EMAIL = re.compile(r"^([a-zA-Z0-9]+([._+-][a-zA-Z0-9]+)*)+@(([a-zA-Z0-9]+-?)+[a-zA-Z0-9]\.)+[a-zA-Z]{2,}$")
USERNAME = re.compile(r"^[a-zA-Z]([a-zA-Z0-9]+[._-]?)*$")


def is_valid_email(s):
    return isinstance(s, str) and len(s) <= 254 and EMAIL.match(s) is not None


def is_valid_username(s):
    return isinstance(s, str) and 3 <= len(s) <= 32 and USERNAME.match(s) is not None


def validate_signup(form):
    errors = {}
    if not is_valid_username(form.get("username", "")):
        errors["username"] = "3-32 letters, digits, '.', '-', '_', starting with a letter"
    if not is_valid_email(form.get("email", "")):
        errors["email"] = "not a valid e-mail address"
    if len(form.get("password", "")) < 10:
        errors["password"] = "at least 10 characters"
    return errors
