#!/bin/sh
# bench/noise/compare.py (its docstring says what it prints): four softmax tuning
# databases, two with the alternation of close contenders and two without.
exec python3 "$(dirname "$0")/compare.py" "$@"
