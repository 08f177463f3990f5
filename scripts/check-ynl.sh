#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The YNL spec of the generic netlink family (Documentation/netlink/specs/
# neuron.yaml) on the host, as TAP (scripts/check.sh counts the lines):
#   - it loads in the kernel's own YNL library (tools/net/ynl/lib/nlspec.py
#     of linux-source-6.12, selftests/vm/fetch-ynl.sh), which validates it
#     with python3-jsonschema against the kernel's genetlink-legacy schema
#   - its family name, version and group name, its attribute and command
#     values, and its enum and flags definitions match
#     include/uapi/linux/neuron.h and include/uapi/linux/neuron_record.h
#   - what kernel/neuron_genl.c does matches it: the policy's request
#     attributes, the attributes (and their types) each message builder
#     puts, GENL_ADMIN_PERM on operations and the events group's admin flag
#   - the kernel's C generator (ynl-gen-c.py --mode uapi) renders it as the
#     enum, constant and define names and values of the uapi header
# The live family is driven with the spec in the 6.12 lane
# (docs/architecture.md#ynl-spec). Needs python3-yaml and python3-jsonschema
# (scripts/setup-host.sh); Debian's /usr/bin/python3, whose dist-packages
# hold them.
set -uo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
echo "TAP version 13"
if ! ynl=$(selftests/vm/fetch-ynl.sh | tail -1); then
	echo "not ok 1 ynl.fetch_linux_source_6.12"
	exit 1
fi
echo "# kernel YNL tool and schemas: $ynl"
exec "$py" - "$ynl" <<'PY'
import os
import re
import sys

ynl = sys.argv[1]
sys.path.insert(0, os.path.join(ynl, 'tools/net/ynl'))
n = 0
failed = 0


def result(ok, name, why=''):
    global n, failed
    n += 1
    if ok:
        print(f'ok {n} ynl.{name}')
    else:
        failed += 1
        print(f'not ok {n} ynl.{name}')
        for line in why.splitlines():
            print(f'# {line}')


def cname(prefix, name):
    return (prefix + name).upper().replace('-', '_')


def read(path):
    with open(path) as f:
        return f.read()


def c_enum(text, name):
    """{NAME: value} of enum NAME in C text (values implicit or literal)."""
    body = re.search(r'enum\s+' + name + r'\s*\{(.*?)\};', text, re.S).group(1)
    body = re.sub(r'/\*.*?\*/', '', body, flags=re.S)
    vals, v = {}, 0
    for item in body.split(','):
        item = item.strip()
        if not item:
            continue
        m = re.fullmatch(r'(\w+)(?:\s*=\s*(\w+))?', item)
        if not m:  # NAME_MAX = (__NAME_MAX - 1) and the like
            continue
        if m.group(2) is not None:
            v = int(m.group(2), 0)
        vals[m.group(1)] = v
        v += 1
    return vals


def c_function(text, name):
    m = re.search(r'^[^\n]*\b' + name + r'\([^)]*\)\n\{\n(.*?)^\}', text, re.S | re.M)
    return m.group(1) if m else ''


spec_path = 'Documentation/netlink/specs/neuron.yaml'
schema = os.path.join(ynl, 'Documentation/netlink/genetlink-legacy.yaml')
try:
    from lib.nlspec import SpecFamily
    fam = SpecFamily(spec_path, schema)
    result(True, 'spec_validates_against_genetlink_legacy_schema')
except Exception as e:  # jsonschema.ValidationError or a spec error
    where = '/'.join(str(p) for p in getattr(e, 'absolute_path', []))
    result(False, 'spec_validates_against_genetlink_legacy_schema',
           f"{getattr(e, 'message', str(e))} (at /{where})")
    print(f'1..{n}')
    sys.exit(1)

uapi = read('include/uapi/linux/neuron.h')
record = read('include/uapi/linux/neuron_record.h')
headers = {'linux/neuron.h': uapi, 'linux/neuron_record.h': record}
genl = read('kernel/neuron_genl.c')


def define(text, name):
    m = re.search(r'#define\s+' + name + r'\s+(\S+)', text)
    return m.group(1).strip('"') if m else None


why = []
for what, want, got in (('name', define(uapi, 'NEURON_GENL_NAME'), fam.name),
                        ('version', define(uapi, 'NEURON_GENL_VERSION'), str(fam.yaml['version'])),
                        ('group', define(uapi, 'NEURON_GENL_MCGRP_EVENTS'), ','.join(fam.mcast_groups))):
    if want != got:
        why.append(f'{what}: header {want}, spec {got}')
result(not why, 'family_name_version_group_match_uapi', '\n'.join(why))

aset = fam.attr_sets['neuron']
prefix = aset.yaml['name-prefix']
hdr_attrs = {k: v for k, v in c_enum(uapi, 'neuron_genl_attr').items()
             if k not in ('NEURON_A_UNSPEC', '__NEURON_A_MAX')}
spec_attrs = {cname(prefix, a.name): a.value for a in aset.attrs.values()}
why = [f'{k}: header {hdr_attrs.get(k)}, spec {spec_attrs.get(k)}'
       for k in sorted(set(hdr_attrs) | set(spec_attrs)) if hdr_attrs.get(k) != spec_attrs.get(k)]
result(not why, 'attributes_match_uapi_enum_neuron_genl_attr', '\n'.join(why))

oprefix = fam.yaml['operations']['name-prefix']
hdr_cmds = {k: v for k, v in c_enum(uapi, 'neuron_genl_cmd').items()
            if k not in ('NEURON_CMD_UNSPEC', '__NEURON_CMD_MAX')}
spec_cmds = {cname(oprefix, m.name): m.req_value for m in fam.msgs.values()}
why = [f'{k}: header {hdr_cmds.get(k)}, spec {spec_cmds.get(k)}'
       for k in sorted(set(hdr_cmds) | set(spec_cmds)) if hdr_cmds.get(k) != spec_cmds.get(k)]
result(not why, 'operations_match_uapi_enum_neuron_genl_cmd', '\n'.join(why))

why = []
for d in fam.consts.values():
    text = headers.get(d.yaml.get('header', 'linux/neuron.h'))
    if text is None:
        why.append(f'{d.name}: header {d.yaml.get("header")} is not a uapi header')
        continue
    pfx = d.yaml['name-prefix']
    if d.type == 'enum':
        hdr = c_enum(text, d.yaml['enum-name'])
        spec = {cname(pfx, e.name): e.value for e in d.entries.values()}
    else:  # flags: #define NAME (1u << N)
        hdr = {}
        for m in re.finditer(r'#define\s+(' + cname(pfx, '') + r'\w+)\s+\(1u?\s*<<\s*(\d+)\)', text):
            hdr[m.group(1)] = 1 << int(m.group(2))
        spec = {cname(pfx, e.name): e.user_value() for e in d.entries.values()}
    for k in sorted(set(hdr) | set(spec)):
        if hdr.get(k) != spec.get(k):
            why.append(f'{d.name} {k}: header {hdr.get(k)}, spec {spec.get(k)}')
result(not why, 'definitions_match_headers', '\n'.join(why))

# the policy: requests may carry exactly these attributes
policy = re.search(r'neuron_genl_policy\[[^]]*\]\s*=\s*\{(.*?)\};', genl, re.S).group(1)
pol = {m.group(1): m.group(2) for m in re.finditer(r'\[(NEURON_A_\w+)\]\s*=\s*\{\s*\.type\s*=\s*NLA_(\w+)', policy)}
why = []
for op in fam.ops.values():
    for mode in ('do', 'dump'):
        req = set(op.yaml.get(mode, {}).get('request', {}).get('attributes', []))
        extra = {cname(prefix, a) for a in req} - set(pol)
        if extra:
            why.append(f'{op.name} {mode} request: {sorted(extra)} not in neuron_genl_policy')
        for a in req:
            if pol.get(cname(prefix, a), '').lower() != aset[a].type:
                why.append(f'{a}: policy NLA_{pol.get(cname(prefix, a))}, spec {aset[a].type}')
result(not why, 'request_attributes_match_kernel_policy', '\n'.join(why))

# each message builder puts exactly the spec's attributes, with its types
puts = {'nla_put_u8': 'u8', 'nla_put_u16': 'u16', 'nla_put_u32': 'u32',
        'neuron_genl_put_u64': 'u64', 'nla_put_u64_64bit': 'u64', 'nla_nest_start': 'nest'}
# (a nest's builder opens it: a call to that function puts the nest)
builders = (('neuron_genl_fill_device', fam.ops['get-device'].yaml['do']['reply']['attributes']),
            ('neuron_genl_fill_nq', fam.ops['get-nq'].yaml['dump']['reply']['attributes']),
            ('neuron_genl_event', fam.msgs['event'].yaml['event']['attributes']),
            ('neuron_genl_put_intr_counts', list(fam.attr_sets['intr-counts'].attrs)))
nest_of = {'neuron_genl_put_intr_counts': 'NEURON_A_INTR_COUNTS'}
why = []
for fn, attrs in builders:
    body = c_function(genl, fn)
    if not body:
        why.append(f'{fn}() not found in kernel/neuron_genl.c')
        continue
    put = {}
    for m in re.finditer(r'\b(\w+)\(skb,\s*(NEURON_A_\w+)', body):
        if m.group(1) in puts and m.group(2) != nest_of.get(fn):
            put[m.group(2)] = puts[m.group(1)]
    for sub, attr in nest_of.items():
        if re.search(r'\b' + sub + r'\(skb', body):
            put[attr] = 'nest'
    spec = {cname(prefix, a): aset[a].type for a in attrs}
    for k in sorted(set(put) | set(spec)):
        if put.get(k) != spec.get(k):
            why.append(f'{fn}: {k} put as {put.get(k)}, spec {spec.get(k)}')
result(not why, 'message_builders_match_spec_attributes_and_types', '\n'.join(why))

# GENL_ADMIN_PERM per operation; the events group's admin flag
why = []
ops = re.search(r'genl_ops\s+neuron_genl_ops\[\]\s*=\s*\{(.*?)\n\};', genl, re.S).group(1)
for blk in re.findall(r'\{(.*?)\n\t\}', ops, re.S):
    cmd = re.search(r'\.cmd\s*=\s*(NEURON_CMD_\w+)', blk).group(1)
    kflags = sorted(f.lower().replace('_', '-') for f in re.findall(r'GENL_((?:UNS_)?ADMIN_PERM)', blk))
    op = [o for o in fam.ops.values() if cname(oprefix, o.name) == cmd]
    sflags = sorted(op[0].yaml.get('flags', [])) if op else None
    if kflags != sflags:
        why.append(f'{cmd}: kernel {kflags}, spec {sflags}')
grps = re.search(r'neuron_genl_mcgrps\[\]\s*=\s*\{(.*?)\n\};', genl, re.S).group(1)
kadmin = bool(re.search(r'\.flags\s*=\s*(NEURON_GENL_MCAST_ADMIN|GENL_MCAST_CAP_NET_ADMIN)', grps))
sadmin = 'admin-perm' in fam.mcast_groups['events'].yaml.get('flags', [])
if kadmin != sadmin:
    why.append(f'events group: kernel admin {kadmin}, spec admin {sadmin}')
result(not why, 'admin_flags_match_kernel', '\n'.join(why))

# the kernel's C generator renders the spec as our uapi names and values
# (it wants a kernel tree: MAINTAINERS at the top, the schema by the spec)
import shutil
import subprocess
import tempfile
why = []
with tempfile.TemporaryDirectory() as tmp:
    os.makedirs(os.path.join(tmp, 'Documentation/netlink/specs'))
    open(os.path.join(tmp, 'MAINTAINERS'), 'w').close()
    shutil.copy(schema, os.path.join(tmp, 'Documentation/netlink/'))
    shutil.copy(spec_path, os.path.join(tmp, 'Documentation/netlink/specs/'))
    out = os.path.join(tmp, 'neuron.h')
    gen = subprocess.run([sys.executable, os.path.join(ynl, 'tools/net/ynl/ynl-gen-c.py'),
                          '--mode', 'uapi', '--header', '-o', out, '--spec',
                          os.path.join(tmp, 'Documentation/netlink/specs/neuron.yaml')],
                         capture_output=True, text=True, timeout=120)
    if gen.returncode != 0 or not os.path.exists(out):
        why.append(f'ynl-gen-c.py failed: {gen.stderr[-1500:]}')
    else:
        text = read(out)
        for enum in ('neuron_genl_attr', 'neuron_genl_cmd'):
            want = {k: v for k, v in c_enum(uapi, enum).items()
                    if not k.endswith('_UNSPEC') and not k.endswith('_MAX')}
            try:
                got = {k: v for k, v in c_enum(text, enum).items() if not k.endswith('_MAX')}
            except AttributeError:
                got = {}
            if want != got:
                why.append(f'enum {enum}: uapi {want}, generated {got}')
        for d in ('NEURON_GENL_NAME', 'NEURON_GENL_VERSION', 'NEURON_GENL_MCGRP_EVENTS'):
            if define(uapi, d) != define(text, d):
                why.append(f'{d}: uapi {define(uapi, d)}, generated {define(text, d)}')
result(not why, 'ynl_gen_c_renders_the_uapi_names_and_values', '\n'.join(why))

print(f'1..{n}')
print(f'# ynl: {failed} of {n} checks failed')
sys.exit(1 if failed else 0)
PY
