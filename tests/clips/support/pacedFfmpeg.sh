#!/bin/sh
# ffmpeg for a worker a crash test kills mid-render (FFMPEG_PATH=<this file>): a local clip render
# (providers/local/clipEffects.ts: a -filter_complex graph ending in its output label [v]) gets ffmpeg's own
# `realtime` filter appended, so its frames come out at PACED_FFMPEG_SPEED x real time (default 0.15: the 5 s clip takes
# about half a minute) instead of as fast as the CPU allows. The render is still the real one, it just uses next to
# no CPU while the test waits for its progress and kills it; the test never waits for it to finish.
# With PACED_FFMPEG_WHILE set, only while that file exists (so the test can let a restarted worker render at full
# speed); every other ffmpeg run (previews, thumbnails, probes) is passed through untouched.
if [ -n "$PACED_FFMPEG_WHILE" ] && [ ! -e "$PACED_FFMPEG_WHILE" ]; then
  exec ffmpeg "$@"
fi
count=$#
previous=
for arg in "$@"; do
  if [ "$previous" = "-filter_complex" ]; then
    case "$arg" in
      *'[v]') arg="${arg%\[v\]},realtime=speed=${PACED_FFMPEG_SPEED:-0.15}[v]" ;;
    esac
  fi
  set -- "$@" "$arg"
  previous=$arg
done
shift "$count"
exec ffmpeg "$@"
