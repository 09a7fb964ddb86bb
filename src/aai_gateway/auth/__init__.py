"""Auth layer: credential records bound to descriptor sources, the secret store, auth flows."""

from ..errors import SecretStoreUnavailableError
from .credentials import Credential, CredentialStore, OAuthTokens, credential_key
from .secrets import KeyringSecretStore, MemorySecretStore, SecretStore

__all__ = [
    "Credential",
    "CredentialStore",
    "KeyringSecretStore",
    "MemorySecretStore",
    "OAuthTokens",
    "SecretStore",
    "SecretStoreUnavailableError",
    "credential_key",
]
