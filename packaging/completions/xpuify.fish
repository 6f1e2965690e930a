# fish completion for xpuify (installed as share/fish/vendor_completions.d/xpuify.fish). Commands from
# `xpuify help`, each command's options from `xpuify COMMAND --help`: those of the installed binary. The values of
# the options that take one of a few words are listed here; tests/cli/test_install.py checks them against --help.
function __xpuify_commands
    # "  check [PATH...]      report CUDA-only code": the name, a tab, the text after the first run of 2 spaces
    xpuify help 2>/dev/null | awk '/^Commands:/ {on=1; next}
        on && /^  [a-z]/ {s = substr($0, 3); n = s; sub(/ .*/, "", n); i = index(s, "  "); d = substr(s, i); sub(/^ +/, "", d); print n "\t" d}
        on && /^$/ {on=0}'
end
function __xpuify_options
    set -l cmd (commandline -opc)[2]
    xpuify $cmd --help 2>&1 | string match -r -a -- '--[A-Za-z][A-Za-z0-9-]*' | sort -u
end
complete -c xpuify -f -n __fish_use_subcommand -a '(__xpuify_commands)'
complete -c xpuify -n 'not __fish_use_subcommand; and string match -q -- "-*" (commandline -ct)' -a '(__xpuify_options)'
complete -c xpuify -n 'not __fish_use_subcommand' -F
complete -c xpuify -s f -l format -x -a 'text concise json sarif github gitlab junit' -d 'report format'
complete -c xpuify -l target -x -a 'auto accelerator compat' -d 'what fixes call'
complete -c xpuify -l fail-on -x -a 'error warning info' -d 'severity that fails'
complete -c xpuify -l color -x -a 'auto always never' -d 'colored output'
complete -c xpuify -l rules -l cache-dir -l layer-dir -l compile-commands -l cuda-path -s p -x -a '(__fish_complete_directories (commandline -ct))'
complete -c xpuify -l version -d 'print the version'
complete -c xpuify -l help -d 'the commands'
