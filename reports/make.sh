#!/usr/bin/env bash
# Makes every shipped report again from the judgments kept in reports/kept/, calling no judge:
#   bash reports/make.sh              # every report (the full datasets' need ../shared/data)
#   bash reports/make.sh fed_sample   # the reports named
# Every kept file is read into one fresh store (`geval judgments import`), then each report is written
# from it with the options below, as reports/README.md lists (SummEval's and MT-Bench's from ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GEVAL_STORE="$work/reports.sqlite"
options=(--baselines rouge-l,bleu,chrf,length,bertscore --calibrate --ensemble)
samples=(personachat_usr_sample summeval_sample fed_sample dstc9_sample)
full=(tc_usr_data summeval mtbench)
# the datasets `judgments import` cannot find by name: loaded from their folders first
declare -A folder=([mtbench]=../shared/data/alttest/mtbench)
wanted=("${@:-${samples[@]} ${full[@]} learning_curves summeval_systems}")
wanted=(${wanted[*]})

for name in "${samples[@]}" "${full[@]}"; do
    if [ -n "${folder[$name]:-}" ]; then python -m geval datasets load "${folder[$name]}"; fi
    python -m geval judgments import "reports/kept/$name.jsonl.xz"
done
for name in "${wanted[@]}"; do
    case "$name" in
        learning_curves)
            nice python bench/learning_curves.py --dataset tc_usr_data --seeds 5 ;;
        summeval_systems)
            nice python bench/systems_report.py --labels 20 --draws 200 --store "$work/systems.sqlite" ;;
        *)
            python -m geval report "$name" --out reports "${options[@]}" ;;
    esac
done
