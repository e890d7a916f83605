#!/bin/sh
# ffmpeg for a worker a crash test kills mid-render (FFMPEG_PATH=<this file>): the render gets ffmpeg's own `realtime`
# filter before its output, so its frames come out at PACED_FFMPEG_SPEED x real time (default 0.15: a 5 s video takes
# about half a minute) instead of as fast as the CPU allows. The render is still the real one, it just uses next to no
# CPU while the test waits for its progress and kills it; the test never waits for it to finish. Two renders are paced:
# - a local clip render (providers/local/clipEffects.ts): a -filter_complex graph ending in its output label [v];
# - an assembly render (activities/assemblyMedia.ts): a -filter_complex_script graph file whose video goes out as
#   [vout] (its preview, split from the same frames, follows). ffmpeg reads a paced copy of that file, written beside
#   it (<file>.paced, in the render's scratch folder, which goes with it); the product's file is left as it is.
# With PACED_FFMPEG_WHILE set, only while that file exists (so the test can let a restarted worker render at full
# speed); every other ffmpeg run (thumbnails, probes, other graphs) is passed through untouched.
if [ -n "$PACED_FFMPEG_WHILE" ] && [ ! -e "$PACED_FFMPEG_WHILE" ]; then
  exec ffmpeg "$@"
fi
speed=${PACED_FFMPEG_SPEED:-0.15}
count=$#
previous=
for arg in "$@"; do
  case "$previous" in
    -filter_complex)
      case "$arg" in
        *'[v]') arg="${arg%\[v\]},realtime=speed=$speed[v]" ;;
      esac
      ;;
    -filter_complex_script)
      if [ -f "$arg" ] && grep -q '\[vout\]' "$arg"; then
        { sed 's/\[vout\]/[vout_unpaced]/g' "$arg" && printf ';[vout_unpaced]realtime=speed=%s[vout]' "$speed"; } > "$arg.paced" || exit 1
        arg="$arg.paced"
      fi
      ;;
  esac
  set -- "$@" "$arg"
  previous=$arg
done
shift "$count"
exec ffmpeg "$@"
