# fish completion for xpuify (installed as share/fish/vendor_completions.d/xpuify.fish). Commands from
# `xpuify help`, each command's options from `xpuify COMMAND --help`.
function __xpuify_commands
    xpuify help 2>/dev/null | awk '/^Commands:/ {on=1; next} on && /^  [a-z]/ {n=$1; sub(/^  [^ ]+ +/, ""); print n "\t" $0} on && /^$/ {on=0}'
end
function __xpuify_options
    set -l cmd (commandline -opc)[2]
    xpuify $cmd --help 2>&1 | string match -r -a -- '--[A-Za-z][A-Za-z0-9-]*' | sort -u
end
complete -c xpuify -f -n __fish_use_subcommand -a '(__xpuify_commands)'
complete -c xpuify -n 'not __fish_use_subcommand; and string match -q -- "-*" (commandline -ct)' -a '(__xpuify_options)'
complete -c xpuify -n 'not __fish_use_subcommand' -F
complete -c xpuify -l version -d 'print the version'
complete -c xpuify -l help -d 'the commands'
