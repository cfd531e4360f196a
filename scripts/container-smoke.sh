#!/usr/bin/env bash
# Build the submission image from the Dockerfile and run it the way TIRA does: network off, input mounted
# read-only, an empty output dir, the command `exec /entrypoint.sh -i $inputDataset -o $outputDir` through `sh -c`.
# Each run must pass `touche validate` inside the image, leave the container's filesystem untouched outside the
# output dir, leave only run.txt and ir-metadata.yml in it, and rank the same documents in the same order as the
# host-side `touche run` on the same input. One more run starts the image as a user would, with no arguments:
# `docker run -v input:/in:ro -v out:/out IMAGE`.
#
# Uses docker when an engine answers, else rootful podman (installed from Debian's packages when missing) on a
# base image made with debootstrap, since no registry can be pulled from on the build machines.
# Settings (environment): IMAGE (tag to build), BASE_IMAGE (local base for podman), SHARED_INPUT (the Touché 2022
# TIRA input), HOST_TOUCHE (the host-side CLI), HOST_PYTHON (whose pip settings the build copies), KEEP_WORK=1
# (keep the temp dir with the runs and logs), REUSE_IMAGE=1 (skip the build when IMAGE exists: to iterate on runs).
set -Eeuo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGE=${IMAGE:-localhost/touche:smoke}
BASE_IMAGE=${BASE_IMAGE:-localhost/python-base}
SHARED_INPUT=${SHARED_INPUT:-$REPO/../shared/data/touche-2022-task2/tira-input}
HOST_TOUCHE=${HOST_TOUCHE:-$REPO/.venv/bin/touche}
HOST_PYTHON=${HOST_PYTHON:-$REPO/.venv/bin/python}
TIRA_COMMAND='exec /entrypoint.sh -i $inputDataset -o $outputDir'
TIRA_INPUT=/tira-data/input
TIRA_OUTPUT=/tira-data/output
# Without these, runc cannot set the default rlimits inside this machine's sandbox.
ULIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

STEP=setup
WORK=$(mktemp -d /tmp/container-smoke.XXXXXX)
CONTAINERS=()
SUMMARY=()

say() { echo "container-smoke: $*" >&2; }
fail() { say "FAILED in step '$STEP': $*"; exit 1; }
trap 'say "FAILED in step '"'"'$STEP'"'"': command exited with $? (line $LINENO)"' ERR

cleanup() {
    local status=$?
    for name in "${CONTAINERS[@]}"; do
        "${ENGINE[@]}" rm -f "$name" >/dev/null 2>&1 || true
    done
    if [[ $status -ne 0 || ${KEEP_WORK:-0} == 1 ]]; then
        say "outputs and logs kept in $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

seconds_since() { echo $((SECONDS - $1)); }

# --- engine -------------------------------------------------------------------------------------------------

install_podman() {
    local missing=()
    for tool in podman buildah runc debootstrap; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    [[ ${#missing[@]} -eq 0 ]] && return
    [[ $(id -u) -eq 0 ]] || fail "rootful podman needs root to install ${missing[*]}"
    say "installing ${missing[*]} from Debian's packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$WORK/apt.log" 2>&1 \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            podman buildah runc debootstrap >>"$WORK/apt.log" 2>&1 \
        || fail "apt-get install failed, see $WORK/apt.log"
}

choose_engine() {
    if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
        ENGINE=(docker)
    else
        [[ $(id -u) -eq 0 ]] || fail "no docker engine answers and rootful podman needs root"
        install_podman
        ENGINE=(podman --storage-driver vfs --runtime runc)
    fi
    say "engine: ${ENGINE[*]}"
}

# --- base image (podman only) ---------------------------------------------------------------------------------

debian_mirror() {
    local uri
    uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
        | grep -E '^[[:space:]]*(URIs:|deb )' | grep -oE 'https?://[^[:space:]]+/debian/?' | head -n1 || true)
    echo "${uri:-http://deb.debian.org/debian}"
}

make_base_image() {
    if "${ENGINE[@]}" image exists "$BASE_IMAGE"; then
        say "base image $BASE_IMAGE already present"
        return
    fi
    local rootfs="$WORK/rootfs" mirror start=$SECONDS
    mirror=$(debian_mirror)
    say "making $BASE_IMAGE with debootstrap (bookworm, python3.11) from $mirror"
    debootstrap --variant=minbase --include=python3,python3-venv bookworm "$rootfs" "$mirror" \
        >"$WORK/debootstrap.log" 2>&1 || fail "debootstrap failed, see $WORK/debootstrap.log"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | "${ENGINE[@]}" import - "$BASE_IMAGE" >/dev/null
    rm -rf "$rootfs"
    say "base image made in $(seconds_since "$start") s"
}

# --- build --------------------------------------------------------------------------------------------------

# pip's effective value for a setting on this machine: its PIP_* variable, else its configuration files.
pip_setting() {
    local variable="PIP_$(tr 'a-z-' 'A-Z_' <<<"$1")"
    if [[ -n ${!variable:-} ]]; then
        echo "${!variable}"
    else
        "$HOST_PYTHON" -m pip config get "global.$1" 2>/dev/null || true
    fi
}

# Build arguments and mounts that hand this machine's pip settings (local wheel folders and indexes, CA bundle)
# to the build, so pip inside it finds the CPU torch wheel and gets through the network's proxy.
pip_build_options() {
    local find_links index_url extra_index item path cert
    find_links=$(pip_setting find-links)
    index_url=$(pip_setting index-url)
    extra_index=$(pip_setting extra-index-url)
    for item in $find_links; do
        path=${item#file://}
        [[ $path == /* && -d $path ]] && BUILD_OPTIONS+=(-v "$path:$path:ro")
    done
    # A local index (file:///x/simple) links to wheels beside it, so the folder above it goes in.
    for item in $index_url $extra_index; do
        path=$(dirname "${item#file://}")
        [[ $item == file://* && -d $path ]] && BUILD_OPTIONS+=(-v "$path:$path:ro")
    done
    BUILD_OPTIONS+=(--build-arg "PIP_FIND_LINKS=$find_links" --build-arg "PIP_EXTRA_INDEX_URL=$extra_index")
    [[ -n $index_url ]] && BUILD_OPTIONS+=(--build-arg "PIP_INDEX_URL=$index_url")
    cert=$(pip_setting cert)
    cert=${cert:-/etc/ssl/certs/ca-certificates.crt}
    [[ -f $cert ]] && BUILD_OPTIONS+=(-v "$cert:/host-ca.crt:ro" --build-arg PIP_CERT=/host-ca.crt)
    # A CPU torch wheel among the find-links: let pip's settings resolve torch instead of the PyTorch index.
    for item in $find_links; do
        if compgen -G "${item#file://}/torch-2.13.0+cpu-*.whl" >/dev/null; then
            BUILD_OPTIONS+=(--build-arg TORCH_INDEX_URL=)
            break
        fi
    done
}

build_image() {
    BUILD_OPTIONS=()
    if [[ ${ENGINE[0]} == podman ]]; then
        make_base_image
        pip_build_options
        # One commit at the end: on the vfs driver every intermediate layer is a full copy of the tree.
        BUILD_OPTIONS+=(--isolation chroot --network host --pull=never --layers=false --build-arg "BASE=$BASE_IMAGE")
    fi
    local start=$SECONDS previous
    previous=$("${ENGINE[@]}" image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
    say "building $IMAGE from $REPO/Dockerfile"
    "${ENGINE[@]}" build "${BUILD_OPTIONS[@]}" -t "$IMAGE" -f "$REPO/Dockerfile" "$REPO" >"$WORK/build.log" 2>&1 \
        || { tail -n 30 "$WORK/build.log" >&2; fail "image build failed, see $WORK/build.log"; }
    BUILD_SECONDS=$(seconds_since "$start")
    # The image this tag named before is now unnamed; drop it rather than let copies pile up on disk.
    if [[ -n $previous ]] && [[ $previous != $("${ENGINE[@]}" image inspect --format '{{.Id}}' "$IMAGE") ]]; then
        "${ENGINE[@]}" rmi "$previous" >/dev/null 2>&1 || true
    fi
    say "built $IMAGE in $BUILD_SECONDS s"
}

image_size() {
    "${ENGINE[@]}" image inspect --format '{{.Size}}' "$IMAGE" | awk '{ printf "%.2f GB (%d bytes)", $1 / 1e9, $1 }'
}

# --- runs ---------------------------------------------------------------------------------------------------

# What every container changes by merely running: its mount points and the files the engine provides.
# /tmp is scratch space in any sandbox: writes there are reported, not failed (torch's import makes
# /tmp/torchinductor_$USER); anything else outside the output dir fails the run.
RUNTIME_PATHS='/tira-data(/input|/output)?|/etc|/etc/(hosts|hostname|resolv\.conf|mtab)|/run|/run/\.containerenv|/run/secrets|/dev(/.*)?|/proc|/sys'

# Run the image on INPUT as TIRA does, check what it wrote, and compare it with the host-side run.
# NAME labels the run: its output is $WORK/runs/NAME, the host's $WORK/host/NAME, the logs $WORK/logs/NAME.*.
run_like_tira() {
    local name=$1 input=$2
    STEP="run $name"
    [[ -d $input ]] || fail "input directory $input is missing"
    input=$(cd "$input" && pwd)
    local output="$WORK/runs/$name" host_output="$WORK/host/$name" log="$WORK/logs/$name"
    local container="touche-smoke-$name-$$"
    mkdir -p "$output" "$WORK/host" "$WORK/logs"
    local command=${TIRA_COMMAND//'$inputDataset'/$TIRA_INPUT}
    command=${command//'$outputDir'/$TIRA_OUTPUT}
    CONTAINERS+=("$container")
    local start=$SECONDS
    "${ENGINE[@]}" run --name "$container" --network none "${ULIMITS[@]}" \
        -v "$input:$TIRA_INPUT:ro" -v "$output:$TIRA_OUTPUT" \
        -e "inputDataset=$TIRA_INPUT" -e "outputDir=$TIRA_OUTPUT" \
        -e "TIRA_INPUT_DATASET=$TIRA_INPUT" -e "TIRA_OUTPUT_DIR=$TIRA_OUTPUT" -e "TIRA_DATASET_ID=smoke-$name" \
        --entrypoint sh "$IMAGE" -c "$command" >"$log.container.log" 2>&1 \
        || { tail -n 20 "$log.container.log" >&2; fail "the container exited with an error, see $log.container.log"; }
    local run_seconds
    run_seconds=$(seconds_since "$start")

    STEP="sandbox $name"
    local changed written scratch
    changed=$("${ENGINE[@]}" diff "$container" | awk '{ print $2 }' | grep -vxE "$RUNTIME_PATHS" || true)
    "${ENGINE[@]}" rm "$container" >/dev/null
    written=$(grep -vE '^/tmp(/|$)' <<<"$changed" || true)
    scratch=$(grep -E '^/tmp/' <<<"$changed" || true)
    [[ -z $written ]] || fail "the run wrote outside the output dir: $(echo $written)"
    check_output "$output"

    STEP="host run $name"
    start=$SECONDS
    "$HOST_TOUCHE" run --quiet -i "$input" -o "$host_output" >"$log.host.log" 2>&1 \
        || { tail -n 20 "$log.host.log" >&2; fail "the host-side touche run failed, see $log.host.log"; }
    local host_seconds
    host_seconds=$(seconds_since "$start")

    STEP="compare $name"
    ranking "$output" >"$log.container.ranking"
    ranking "$host_output" >"$log.host.ranking"
    diff -q "$log.host.ranking" "$log.container.ranking" >/dev/null \
        || { diff "$log.host.ranking" "$log.container.ranking" | head -n 10 >&2 || true
             fail "the container ranks other documents or in another order than the host-side run"; }
    SUMMARY+=("run $name: container ${run_seconds} s (host ${host_seconds} s), $(wc -l <"$log.container.ranking") lines, same ranking as the host${scratch:+; scratch left in /tmp: $(echo $scratch)}")
    say "${SUMMARY[-1]}"
}

# TIRA keeps the whole output dir as the run's output: it must hold the run and its ir_metadata, nothing else.
check_output() {
    local listing
    listing=$(cd "$1" && find . -mindepth 1 -printf '%P\n' | sort | tr '\n' ' ')
    [[ $listing == "ir-metadata.yml run.txt " ]] || fail "the output dir holds '$listing', not run.txt and ir-metadata.yml"
}

# `docker run -v input:/in:ro -v out:/out IMAGE`, no arguments: the image reads /in and writes /out. The ranking
# must equal the TIRA-style run on the same input (NAME).
run_with_mounts() {
    local name=$1 input=$2
    STEP="run $name with /in and /out"
    input=$(cd "$input" && pwd)
    local output="$WORK/runs/$name-mounts" log="$WORK/logs/$name-mounts"
    mkdir -p "$output"
    local start=$SECONDS
    "${ENGINE[@]}" run --rm --network none "${ULIMITS[@]}" -v "$input:/in:ro" -v "$output:/out" "$IMAGE" \
        >"$log.container.log" 2>&1 \
        || { tail -n 20 "$log.container.log" >&2; fail "the container exited with an error, see $log.container.log"; }
    check_output "$output"
    ranking "$output" >"$log.container.ranking"
    diff -q "$WORK/logs/$name.container.ranking" "$log.container.ranking" >/dev/null \
        || fail "docker run with /in and /out ranks otherwise than the TIRA-style run of $name"
    SUMMARY+=("run $name with /in and /out, no arguments: $(seconds_since "$start") s, the same ranking")
    say "${SUMMARY[-1]}"
}

# Topic, document and rank of every line of the run in OUTPUT_DIR.
ranking() {
    local run="$1/run.txt"
    if [[ -f $run ]]; then awk '{ print $1, $3, $4 }' "$run"; else gzip -dc "$run.gz" | awk '{ print $1, $3, $4 }'; fi
}

# `touche validate` inside the image on every run, in one container (each start copies the image on vfs).
validate_runs() {
    STEP=validate
    local start=$SECONDS
    "${ENGINE[@]}" run --rm --network none "${ULIMITS[@]}" -v "$WORK/runs:/runs:ro" --entrypoint sh "$IMAGE" \
        -c 'status=0; for run in /runs/*; do touche validate "$run" || status=1; done; exit $status' \
        >"$WORK/logs/validate.log" 2>&1 \
        || { cat "$WORK/logs/validate.log" >&2; fail "touche validate rejects a run"; }
    cat "$WORK/logs/validate.log" >&2
    SUMMARY+=("validate: all runs valid inside the image ($(seconds_since "$start") s)")
}

main() {
    cd "$REPO"
    [[ -x $HOST_TOUCHE ]] || fail "no host-side CLI at $HOST_TOUCHE (run make setup)"  # before a build of minutes
    choose_engine
    STEP=build
    if [[ ${REUSE_IMAGE:-0} == 1 ]] && "${ENGINE[@]}" image inspect "$IMAGE" >/dev/null 2>&1; then
        say "reusing the image $IMAGE (REUSE_IMAGE=1)"
        BUILD_SECONDS="(not built)"
    else
        build_image
    fi
    IMAGE_SIZE=$(image_size)
    run_like_tira argsme tests/fixtures/argsme
    run_like_tira passages tests/fixtures/passages
    run_like_tira touche-2022-task2 "$SHARED_INPUT"
    run_with_mounts passages tests/fixtures/passages
    validate_runs
    STEP=summary
    say "image $IMAGE: $IMAGE_SIZE, build $BUILD_SECONDS s"
    printf 'container-smoke: %s\n' "${SUMMARY[@]}" >&2
    say "OK"
}

main "$@"
