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


DEFAULT_PASSWORD = "Orders#Prod!2024"


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
        password=env.get("APP_DB_PASSWORD", DEFAULT_PASSWORD),
    )


def dsn(settings):
    return "postgresql://%s:%s@%s:%d/%s" % (
        quote(settings.user, safe=""), quote(settings.password, safe=""),
        settings.host, settings.port, settings.name)
