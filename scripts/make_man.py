#!/usr/bin/python3
"""The manual pages and the configuration keys of rdmasim, made from what
already says them, so that they cannot drift apart:

  make_man.py command RDMASIM VERSION   rdmasim(1): one section per command,
                                        from `rdmasim --help` and
                                        `rdmasim help COMMAND`
  make_man.py config CONFIG_MD VERSION  rdmasim-config(5): docs/config.md
                                        in roff
  make_man.py keys CONFIG_MD            the keys of the configuration, one a
                                        line, as --set takes them (nic.mtu)

The Markdown read is the part docs/config.md uses: headings, paragraphs,
fenced blocks, bullet and numbered lists, tables, `code`, **bold**,
*emphasis* and [links](...).
"""
import re
import subprocess
import sys

DATE = "2026"


def roff_text(s):
    """Text for roff: backslashes escaped, a leading dot or quote guarded,
    and characters beyond ASCII named, as groff reads them without preconv."""
    s = s.replace("\\", "\\e")
    s = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in s)
    return "\\&" + s if s.startswith((".", "'")) else s


def inline(s):
    s = roff_text(s)
    s = re.sub(r"\[([^\]]+)\]\((https?://[^)]+)\)", r"\1 (\2)", s)
    s = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", s)
    s = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"\\fI\1\\fR", s)
    return s


def header(name, section, title, version):
    return [f'.TH {name.upper()} {section} "{DATE}" "rdmasim {version}" "{title}"']


def code_block(lines):
    return [".PP", ".RS 2", ".nf"] + [roff_text(line) if line else "" for line in lines] + [".fi", ".RE"]


def markdown(text):
    """The body of docs/config.md in roff (its first heading is the title)."""
    out, para = [], []
    lines = text.splitlines()
    i = 0

    def flush():
        if para:
            out.append(inline(" ".join(para)))
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            block = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                block.append(lines[i])
                i += 1
            out += code_block(block)
        elif line.startswith("# "):
            flush()
        elif line.startswith("## "):
            flush()
            out.append('.SH "' + inline(line[3:].upper()).replace('"', "") + '"')
        elif line.startswith("### "):
            flush()
            out.append('.SS "' + inline(line[4:]).replace('"', "") + '"')
        elif line.startswith("|"):
            flush()
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                out += [".TP", inline(cells[0]), inline(" \u2014 ".join(c for c in cells[1:] if c))]
        elif re.match(r"[*-] ", line) or re.match(r"\d+\. ", line):
            flush()
            mark = "\\(bu" if line[0] in "*-" else line.split()[0]
            para.append(line.split(" ", 1)[1])
            out += [f".IP {mark} 4"]
        elif not line.strip():
            flush()
            out.append(".PP")
        else:
            para.append(line.strip())
        i += 1
    flush()
    # no paragraph break right after a heading or before another break
    clean = []
    for line in out:
        if line == ".PP" and clean and (clean[-1] == ".PP" or clean[-1].startswith((".SH", ".SS", ".IP", ".TP"))):
            continue
        clean.append(line)
    return clean


def config_page(path, version):
    with open(path) as f:
        text = f.read()
    out = header("rdmasim-config", 5, "File Formats", version)
    out += [".SH NAME", "rdmasim-config \\- the configuration format of rdmasim sim"]
    out += markdown(text)
    out += [".SH SEE ALSO", ".BR rdmasim (1)"]
    return out


def help_text(rdmasim, *args):
    return subprocess.run([rdmasim, *args], check=True, capture_output=True, text=True).stdout


def command_page(rdmasim, version):
    top = help_text(rdmasim, "--help")
    commands = re.findall(r"^  (\w+) +(.*)$", top.split("commands:", 1)[1], re.M)
    out = header("rdmasim", 1, "User Commands", version)
    out += [".SH NAME", "rdmasim \\- decode, replay and simulate RDMA on the wire",
            ".SH SYNOPSIS", ".nf"] + [roff_text(re.sub(r"^(usage: |       )", "", line))
                                      for line in top.split("\n\n", 1)[0].splitlines()]
    out += [".fi", ".SH DESCRIPTION",
            "One command with subcommands, each described in a section below; "
            "\\fBrdmasim help\\fR \\fICOMMAND\\fR prints the same text.",
            ]
    for name, what in commands:
        out += [".TP", f"\\fB{name}\\fR", roff_text(what)]
    for name, _ in commands:
        out += [f'.SH "RDMASIM {name.upper()}"', ".nf"]
        out += [roff_text(line) for line in help_text(rdmasim, "help", name).rstrip("\n").splitlines()]
        out += [".fi"]
    out += [".SH FILES",
            "The configuration of \\fBrdmasim sim\\fR is described in \\fBrdmasim-config\\fR(5); "
            "a run writes its outputs into the directory given with \\fB--out\\fR "
            "and lists them in \\fIrdmasim-outputs.txt\\fR there.",
            ".SH SEE ALSO", ".BR rdmasim-config (5),", ".BR tshark (1)"]
    return out


def config_keys(path):
    """Dotted paths of the keys in the YAML blocks whose root is a key of
    the top level (the first block lists those), plus the top level."""
    with open(path) as f:
        text = f.read()
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)
    top = re.findall(r"^([a-z_]+):", blocks[0], re.M)
    keys = set(top)
    for block in blocks[1:]:
        stack = []
        for line in block.splitlines():
            m = re.match(r"^( *)([a-z_][a-z0-9_]*):", line)
            if not m:
                continue
            indent = len(m.group(1))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            path = [k for _, k in stack] + [m.group(2)]
            if path[0] in top:
                keys.add(".".join(path))
            stack.append((indent, m.group(2)))
    return sorted(keys)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "command" and len(sys.argv) == 4:
        lines = command_page(sys.argv[2], sys.argv[3])
    elif mode == "config" and len(sys.argv) == 4:
        lines = config_page(sys.argv[2], sys.argv[3])
    elif mode == "keys" and len(sys.argv) == 3:
        lines = config_keys(sys.argv[2])
    else:
        sys.exit(__doc__.split("\n\n")[1])
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
