"""`fix` on links, end to end: a symlink is kept and its target fixed when that lies inside the project, left alone
(and said so) when it lies outside; a file with several hard links is left alone with a message rather than split
by the atomic rename (the other names would silently keep the old text)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, write  # noqa: E402

SYNC = "import torch\ntorch.cuda.synchronize()\n"


def test_symlinks_and_hard_links(d):
    os.makedirs("outside")
    os.makedirs("proj/pkg")
    write("outside/o.py", SYNC)
    os.chdir("proj")
    subprocess.run(["git", "init", "-q", "."], check=True)
    write("pkg/real.py", SYNC)
    os.symlink("pkg/real.py", "link.py")
    os.symlink("../outside/o.py", "out_link.py")
    write("h1.py", SYNC)
    os.link("h1.py", "h2.py")
    r = run("fix", "--target", "accelerator", "link.py", "out_link.py", "h1.py")
    eq(r.code, 1, r)
    check(os.path.islink("link.py") and os.readlink("link.py") == "pkg/real.py", "the link is kept", r)
    check("torch.accelerator.synchronize()" in read("pkg/real.py"), "its target inside the project is fixed", r)
    check(os.path.islink("out_link.py"), "the outside link is kept")
    eq(read("../outside/o.py"), SYNC, "a target outside the project is never written")
    check("out_link.py: a symlink to " in r.err and "outside the project" in r.err and "left untouched" in r.err,
          "says so", r)
    eq((read("h1.py"), read("h2.py")), (SYNC, SYNC), "hard links are not split")
    eq(os.stat("h1.py").st_ino, os.stat("h2.py").st_ino, "one inode still")
    check("h1.py: has 2 hard links; replacing it would split them" in r.err, "says why", r)


if __name__ == "__main__":
    main(globals())
