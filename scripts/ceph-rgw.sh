#!/usr/bin/env bash
# A throwaway Ceph RADOS Gateway: a real S3 server for the integration tests on machines without
# a Docker engine. One monitor, one in-memory OSD, radosgw on loopback; nothing is installed as a
# service and nothing outlives `stop`.
#
#   scripts/ceph-rgw.sh install        apt-get install radosgw ceph-mon ceph-osd (Debian 12: Ceph 16)
#   scripts/ceph-rgw.sh start  [DIR]   start the cluster; writes DIR/s3.env (S3_ENDPOINT, keys,
#                                      S3_TEST_KMS_KEY_ID: an SSE-KMS key the gateway knows)
#   scripts/ceph-rgw.sh stop   [DIR]   stop exactly the processes `start` recorded in DIR/pids
#   scripts/ceph-rgw.sh status [DIR]   exit 0 if the gateway answers
#
# Environment: RGW_PORT (7480), MON_PORT (3300, msgr2) and MON_PORT_V1 (6789); `auto` for any of
# them picks a free port. S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY: keys of the S3 user to create.
set -euo pipefail

CMD=${1:-start}
DIR=${2:-${CEPH_RGW_DIR:-${TMPDIR:-/tmp}/otel-s3-ceph}}
ACCESS_KEY=${S3_ACCESS_KEY_ID:-OTELS3TESTKEY0000000}
SECRET_KEY=${S3_SECRET_ACCESS_KEY:-otels3testsecret000000000000000000000000}

log() { echo "ceph-rgw: $*" >&2; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Any TCP socket on the port, in any state, listening or not: a connection's source port (or one
# in TIME_WAIT) accepts nothing, yet the monitor's bind fails on it ("Address already in use").
port_in_table() {
  awk -v h="$(printf ':%04X' "$1")" 'FNR > 1 && substr($2, length($2) - 4) == h { f = 1 }
    END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# `auto` ports come from outside the kernel's ephemeral range, so no outgoing connection can take
# one between the pick and the bind (a CI run lost its monitor so: a port picked in 20000-49999,
# taken by a connection's source port before ceph-mon bound it).
auto_range() {
  local lo=32768 hi=60999
  read -r lo hi < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  if [ "$lo" -gt 12000 ]; then echo "10000 $((lo - 10000))"
  elif [ "$hi" -lt 63000 ]; then echo "$((hi + 1)) $((65535 - hi))"
  else echo "20000 30000"; fi
}

pick_port() {
  local want=$1 p base span
  if [ "$want" != auto ]; then
    port_busy "$want" && { log "port $want is in use (set RGW_PORT / MON_PORT / MON_PORT_V1, or 'auto')"; return 1; }
    echo "$want"; return 0
  fi
  read -r base span < <(auto_range)
  for _ in $(seq 1 50); do
    p=$((base + (RANDOM * 32768 + RANDOM) % span))
    port_in_table "$p" || { echo "$p"; return 0; }
  done
  log "no free port found"; return 1
}

# A zombie is dead for our purposes.
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${s:0:1}" != Z ]; }

wait_for_pidfile() {
  for _ in $(seq 1 100); do [ -s "$1" ] && { cat "$1"; return 0; }; sleep 0.1; done
  log "no pid file $1"; return 1
}

do_install() {
  if command -v radosgw >/dev/null && command -v ceph-mon >/dev/null && command -v ceph-osd >/dev/null; then
    return 0
  fi
  if [ -z "$(find /var/lib/apt/lists -name '*_Packages*' -print -quit 2>/dev/null)" ]; then
    apt-get update -qq
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    radosgw ceph-mon ceph-osd >/dev/null
}

do_stop() {
  [ -f "$DIR/pids" ] || return 0
  local pids p
  mapfile -t pids < "$DIR/pids"            # recorded in start order: mon, osd, rgw
  # Gateway and OSD first, the monitor last (they talk to it while stopping).
  for p in "${pids[@]:1}"; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 1 30); do
    local any=0; for p in "${pids[@]:1}"; do alive "$p" && any=1; done
    [ $any = 0 ] && break; sleep 0.1
  done
  kill "${pids[0]}" 2>/dev/null || true
  for _ in $(seq 1 30); do alive "${pids[0]}" || break; sleep 0.1; done
  for p in "${pids[@]}"; do
    if alive "$p"; then log "pid $p ignored SIGTERM for 3 s: SIGKILL"; kill -9 "$p" 2>/dev/null || true; fi
  done
  rm -f "$DIR/pids"
}

do_start() {
  command -v radosgw >/dev/null || { log "Ceph is not installed: run '$0 install' first"; exit 1; }
  do_stop
  local rgw_port mon_port mon_port_v1
  rgw_port=$(pick_port "${RGW_PORT:-7480}")
  mon_port=$(pick_port "${MON_PORT:-3300}")
  mon_port_v1=$(pick_port "${MON_PORT_V1:-6789}")
  if [ "$mon_port" = "$rgw_port" ] || [ "$mon_port_v1" = "$rgw_port" ] || [ "$mon_port_v1" = "$mon_port" ]; then
    log "ports $rgw_port, $mon_port and $mon_port_v1 are not three ports"; exit 1
  fi
  rm -rf "$DIR"
  mkdir -p "$DIR"/{mon.a,osd.0,rgw,log,run}
  local conf=$DIR/ceph.conf fsid osd_uuid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  export CEPH_CONF=$conf
  # Single node: pool size 1, tiny placement-group counts, no health warnings about redundancy,
  # an in-memory object store of 4 GiB (it takes RAM only as it fills).
  cat > "$conf" <<EOF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$mon_port,v1:127.0.0.1:$mon_port_v1]
public network = 127.0.0.0/8
ms bind ipv6 = false
keyring = $DIR/keyring
run dir = $DIR/run
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
pid file = $DIR/run/\$name.pid
auth allow insecure global id reclaim = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
osd objectstore = memstore
memstore device bytes = 4294967296
osd max object name len = 460
osd max object namespace len = 64
[mon.a]
mon data = $DIR/mon.a
[osd.0]
osd data = $DIR/osd.0
[client.rgw.gw]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw data = $DIR/rgw
rgw dns name = localhost
# Server-side encryption for the tests: SSE-KMS with static test keys (RGW's "testing" backend),
# over plain HTTP on loopback.
rgw crypt require ssl = false
rgw crypt s3 kms backend = testing
rgw crypt s3 kms encryption keys = otel-s3-test-key-1=$(head -c 32 /dev/urandom | base64) otel-s3-test-key-2=$(head -c 32 /dev/urandom | base64)
EOF
  # One keyring for every entity; the monitor imports it (with the caps) when it is created.
  ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$DIR/keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' >/dev/null
  ceph-authtool "$DIR/keyring" --gen-key -n osd.0 \
    --cap mon 'allow profile osd' --cap osd 'allow *' --cap mgr 'allow profile osd' >/dev/null
  ceph-authtool "$DIR/keyring" --gen-key -n client.rgw.gw \
    --cap mon 'allow rw' --cap osd 'allow rwx' --cap mgr 'allow rw' >/dev/null
  monmaptool --create --fsid "$fsid" \
    --addv a "[v2:127.0.0.1:$mon_port,v1:127.0.0.1:$mon_port_v1]" "$DIR/monmap" >/dev/null

  ceph-mon --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/keyring"
  ceph-mon -i a
  wait_for_pidfile "$DIR/run/mon.a.pid" > "$DIR/pids"

  timeout 60 ceph osd new "$osd_uuid" 0 >/dev/null
  ceph-osd -i 0 --mkfs --osd-uuid "$osd_uuid" > "$DIR/log/osd-mkfs.out" 2>&1
  ceph-osd -i 0 2>>"$DIR/log/osd-start.out"
  wait_for_pidfile "$DIR/run/osd.0.pid" >> "$DIR/pids"
  for _ in $(seq 1 120); do
    timeout 10 ceph osd dump 2>/dev/null | grep -q '^osd.0 up' && break; sleep 0.5
  done
  timeout 10 ceph osd dump | grep -q '^osd.0 up' || { log "osd.0 not up; see $DIR/log/osd.0.log"; do_stop; exit 1; }

  radosgw -n client.rgw.gw
  wait_for_pidfile "$DIR/run/client.rgw.gw.pid" >> "$DIR/pids"
  local url="http://127.0.0.1:$rgw_port"
  for _ in $(seq 1 240); do curl -fs -o /dev/null "$url/" && break; sleep 0.25; done
  curl -fs -o /dev/null "$url/" || { log "radosgw not answering; see $DIR/log/client.rgw.gw.log"; do_stop; exit 1; }

  radosgw-admin -n client.admin user create --uid=otel-s3-test --display-name=otel-s3-test \
    --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >/dev/null
  printf 'S3_ENDPOINT=%s\nS3_ACCESS_KEY_ID=%s\nS3_SECRET_ACCESS_KEY=%s\nS3_REGION=us-east-1\nS3_TEST_KMS_KEY_ID=otel-s3-test-key-1\n' \
    "$url" "$ACCESS_KEY" "$SECRET_KEY" > "$DIR/s3.env"
  log "S3 on $url (pids $(tr '\n' ' ' < "$DIR/pids")); env in $DIR/s3.env; stop: $0 stop $DIR"
}

do_status() {
  [ -f "$DIR/s3.env" ] || exit 1
  # shellcheck disable=SC1091
  . "$DIR/s3.env"
  curl -fs -o /dev/null "$S3_ENDPOINT/"
}

case "$CMD" in
  install) do_install ;;
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  *) echo "usage: $0 install|start|stop|status [DIR]" >&2; exit 2 ;;
esac
