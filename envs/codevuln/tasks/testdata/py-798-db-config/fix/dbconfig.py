"""Database settings for the orders service."""
from dataclasses import dataclass
from urllib.parse import quote


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Settings:
    host: str
    port: int
    name: str
    user: str
    password: str


def _password(env):
    value = env.get("APP_DB_PASSWORD")
    if value:
        return value
    path = env.get("APP_DB_PASSWORD_FILE")
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                value = f.read().rstrip("\r\n")
        except OSError as e:
            raise ConfigError("cannot read APP_DB_PASSWORD_FILE: %s" % e.strerror) from None
        if value:
            return value
    raise ConfigError("set APP_DB_PASSWORD or APP_DB_PASSWORD_FILE")


def load_settings(env):
    """Settings from the environment mapping env."""
    try:
        port = int(env.get("APP_DB_PORT", "5432"))
    except ValueError:
        raise ConfigError("APP_DB_PORT must be an integer")
    if not 0 < port < 65536:
        raise ConfigError("APP_DB_PORT out of range")
    return Settings(
        host=env.get("APP_DB_HOST", "localhost"),
        port=port,
        name=env.get("APP_DB_NAME", "orders"),
        user=env.get("APP_DB_USER", "orders_app"),
        password=_password(env),
    )


def dsn(settings):
    return "postgresql://%s:%s@%s:%d/%s" % (
        quote(settings.user, safe=""), quote(settings.password, safe=""),
        settings.host, settings.port, settings.name)
