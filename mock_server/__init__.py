"""A stateful mock of the shop API, generated from the spec in openapi/."""

import warnings

# Starlette 1.x warns about httpx at every Connexion import (Connexion imports its test client).
warnings.filterwarnings("ignore", message=".*httpx2.*")
