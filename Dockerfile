# mcp_kit over HTTP in a small image: a non-root user, Streamable HTTP and legacy SSE on port 8000, a
# healthcheck on /readyz (503 while starting, draining or without its Redis).
#   docker build -t mcp-kit-server .
#   docker run --rm -p 8000:8000 mcp-kit-server                     # the stock reference server
#   docker run --rm -p 8000:8000 -e MCP_WORKERS=4 -e MCP_BACKEND=redis://redis:6379/0 mcp-kit-server
# Your own server: FROM this image, COPY server.py /app/, CMD ["mcp-kit", "run", "/app/server.py"].
# Secrets (MCP_AUTH_TOKEN, MCP_OAUTH_*) come at run time (-e, --env-file), never in the image.
FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY mcp_kit ./mcp_kit
COPY servers ./servers
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MCP_TRANSPORT=http \
    MCP_HOST=0.0.0.0 \
    MCP_PORT=8000
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir "$(ls /wheels/*.whl)[redis]" \
    && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin mcp
WORKDIR /app
USER 10001:10001
EXPOSE 8000
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('MCP_PORT', '8000'), timeout=2)"]
CMD ["python", "-m", "servers.stock"]
