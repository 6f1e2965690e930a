# zsh_complete.zsh FPATH LINE WANT: types LINE and a TAB into an interactive zsh (under zpty, a real terminal
# for it), reads what it draws until WANT (a zsh pattern) shows (60 s at most: compinit is slow on a loaded machine) and prints it: the completion as a
# user sees it. Used by tests/cli/test_install.py.
zmodload zsh/zpty
setopt extendedglob
fp=$1 line=$2 want=$3
zpty z zsh -f -i
zpty -w z "PS1='%% '; fpath=($fp \$fpath); autoload -Uz compinit; compinit -u -D; setopt nobeep autolist; unsetopt listambiguous"
zpty -w -n z "$line"$'\t'
out="" plain="" t=0
while (( t < 600 )); do
  if zpty -r -t z chunk; then out+=$chunk; else sleep 0.1; (( t++ )); fi
  plain=${out//$'\e'\[[0-9;?]#[A-Za-z]/}
  [[ $plain == *${~want}* ]] && break
done
print -r -- "$plain"
zpty -d z
