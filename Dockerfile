# The shop mock (the default command) and the contract suite (`shop-contract`) in one image.
#
#   docker build -t shop-contract-suite .
#   docker run --rm -p 127.0.0.1:8000:8000 shop-contract-suite
#
# Every option of shop-mock is also an environment variable (`--some-option` is SHOP_MOCK_SOME_OPTION);
# the admin token comes from SHOP_MOCK_ADMIN_TOKEN or a secret file (SHOP_MOCK_ADMIN_TOKEN_FILE).
# docs/platform.md, "Container image", says the rest.

# The base: a Python slim image pinned by digest. CI builds on a local Debian image instead
# (--build-arg PYTHON_IMAGE=...); any Debian-like image with python3 and its venv module will do.
ARG PYTHON_IMAGE=python:3.12-slim@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea

# --- stage 1: the suite's wheel and the wheels of everything it needs -----------------------------------
FROM ${PYTHON_IMAGE} AS wheels
WORKDIR /src
COPY pyproject.toml README.md ./
COPY shop_contract/ shop_contract/
COPY mock_server/ mock_server/
COPY contract_tests/ contract_tests/
COPY openapi/ openapi/
COPY fixtures/ fixtures/
# Behind a proxy that intercepts TLS, give the CA bundle your machine trusts as a build secret; it is
# mounted for this step only and never stored in a layer:
#   docker build --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt .
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
    && python3 -m venv /opt/build \
    && /opt/build/bin/pip wheel --no-cache-dir --disable-pip-version-check --wheel-dir /wheels ".[mock,redis]" \
    && sha256sum /wheels/*.whl > /src/wheels.sha256

# --- stage 2: the runtime, installed from those wheels alone (no index, no compiler, no cache) -----------
FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="shop-contract-suite" \
      org.opencontainers.image.description="Stateful mock server of the shop API (shop-mock) and its contract suite (shop-contract)" \
      org.opencontainers.image.licenses="MIT"
# The wheels' digests: buildah keys a cached step on its own text, not on what a `--mount` brings, so this
# copy is what makes a change in the wheels install again (it stays, as a record of what was installed).
COPY --from=wheels /src/wheels.sha256 /opt/wheels.sha256
RUN --mount=type=bind,from=wheels,source=/wheels,target=/wheels \
    python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check --no-index --find-links /wheels \
       "shop-contract-suite[mock,redis]" \
    && /opt/venv/bin/pip uninstall --yes --disable-pip-version-check pip setuptools \
    && useradd --uid 10001 --user-group --create-home --home-dir /home/shop --shell /usr/sbin/nologin shop
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    SHOP_MOCK_HOST=0.0.0.0 \
    SHOP_MOCK_PORT=8000
USER 10001:10001
WORKDIR /home/shop
EXPOSE 8000
# The landing page: static, no token, no state. The port is SHOP_MOCK_PORT's (change it there, not with --port).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/' % os.environ['SHOP_MOCK_PORT'], timeout=4)"]
# Exec form: shop-mock is PID 1 and gets SIGTERM itself (uvicorn stops on it).
CMD ["shop-mock"]
