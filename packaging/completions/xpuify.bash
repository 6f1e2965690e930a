# bash completion for xpuify (installed by `make install` / the .deb as share/bash-completion/completions/xpuify).
# Commands come from `xpuify help`, each command's options from `xpuify COMMAND --help`: always those of the
# installed binary, never a copy that can drift.
_xpuify() {
    local cur prev words cword
    _init_completion 2>/dev/null || { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
    if ((cword == 1)); then
        local cmds
        cmds=$("${words[0]}" help 2>/dev/null | awk '/^Commands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on=0}')
        COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
        return
    fi
    case $prev in
        -f|--format) COMPREPLY=($(compgen -W "text concise json sarif github gitlab junit" -- "$cur")); return ;;
        --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        --target) COMPREPLY=($(compgen -W "auto accelerator compat" -- "$cur")); return ;;
        --fail-on) COMPREPLY=($(compgen -W "error warning info" -- "$cur")); return ;;
        --rules|--cache-dir|--layer-dir|-p|--compile-commands|--cuda-path) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$("${words[0]}" "${words[1]}" --help 2>&1 | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -o bashdefault -F _xpuify xpuify
