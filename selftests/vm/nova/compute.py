#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
#
# A stand-in for nova-compute's manager around OpenStack Nova's own libvirt
# driver (nova.virt.libvirt.driver.LibvirtDriver, as Debian ships it,
# unmodified), for selftests/vm/nova.sh. It loads the driver as
# nova-compute does and calls the driver's own methods in the order a
# compute service does: init_host, update_provider_tree (the inventory),
# _allocate_mdevs and spawn (a build), destroy.
#
# What needs a whole cloud is stood in for here, and only that (nova.sh's
# header says what and how): the database, Placement, Glance and Neutron.
# This program is the compute manager (and RPC), driven by commands on
# stdin, one reply line each on stdout:
#
#   (at start, once Nova is imported)
#                        -> ready NOVA_VERSION
#   reload CONF          parse CONF as nova-compute does, load the driver
#                        (a compute restart), init_host
#                        -> ok NODENAME
#   inventory            update_provider_tree -> ok DEV=RC:TOTAL:MAX_UNIT...
#                        (the GPU child providers, by libvirt device name)
#   allocate DEV N       _allocate_mdevs of N against DEV's provider
#                        -> ok UUID... | refused EXCEPTION: MESSAGE
#   listed UUID          wait until libvirt lists the mdev (udev told it)
#                        -> ok MDEV_NODE_NAME
#   spawn NAME DEV       spawn an instance NAME with 1 of DEV's resource
#                        class (power_on=False), then start it paused with
#                        Nova's Guest.launch; XML in OUTDIR/NAME.xml
#                        -> ok DOMAIN STATE MDEV...
#   destroy NAME         destroy (power off, undefine, delete its files)
#                        -> ok
#   pci                  the resource tracker's PCI part: the driver's
#                        PCI devices through Nova's PciDevTracker ([pci]
#                        device_spec), then, with [pci] report_in_placement,
#                        Nova's PCI view of Placement
#                        -> ok ADDR=TYPE:PARENT:STATUS:managed=M...
#                           rp=NAME:RC:TOTAL...
#   pcispawn NAME ALIAS  spawn an instance NAME whose flavor asks for one
#                        device of the [pci] alias ALIAS: the tracker claims
#                        and allocates it, then as spawn
#                        -> ok DOMAIN STATE PCI_ADDRESS | refused: ...
#   boot NAME            what the manager does for a running instance
#                        after a host reboot: resume_state_on_host_boot
#                        (Nova's hard reboot: the domain from Nova's
#                        config code again, with the instance's mdevs)
#                        -> ok DOMAIN STATE MDEV...
#   lmcheck NAME DEV     the live-migration pre-checks of NAME to this
#                        host with 1 of DEV's resource class allocated
#                        there, in the order the manager and conductor
#                        make them: check_can_live_migrate_destination,
#                        check_can_live_migrate_source,
#                        check_source_migrate_data_at_dest,
#                        cleanup_live_migration_destination_check, then
#                        pre_live_migration and the guest XML the source
#                        would send (migration.get_updated_guest_xml); the
#                        migration itself is not started (source and
#                        destination are the same host)
#                        -> ok dst_mdev_lm=BOOL src=UUID:TYPE...
#                           target=SRC:DST... claimed=UUID... xml=UUID...
#                         | refused EXCEPTION: MESSAGE
#   quit
#
# Anything else, or a Nova error where none was expected, replies
# "error EXCEPTION: MESSAGE".
#
# Usage: compute.py OUTDIR < commands

# As nova-compute does (nova/cmd/__init__.py): eventlet first.
import nova.monkey_patch  # noqa: F401

import contextlib  # noqa: E402
import inspect  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

from oslo_log import log as logging  # noqa: E402
from oslo_utils import uuidutils  # noqa: E402

import nova.conf  # noqa: E402
from nova import config  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova import exception  # noqa: E402
from nova import objects  # noqa: E402
from nova import utils  # noqa: E402
from nova.compute import pci_placement_translator  # noqa: E402
from nova.compute import provider_tree  # noqa: E402
from nova.compute import power_state  # noqa: E402
from nova import version  # noqa: E402
from nova.network import model as network_model  # noqa: E402
from nova.network import neutron  # noqa: E402
from nova.pci import manager as pci_manager  # noqa: E402
from nova.pci import request as pci_request  # noqa: E402
from nova.virt import driver as virt_driver  # noqa: E402
from nova.virt import virtapi  # noqa: E402
from nova.virt.libvirt import imagecache  # noqa: E402
from nova.virt.libvirt import migration as libvirt_migration  # noqa: E402

CONF = nova.conf.CONF
LOG = logging.getLogger('gpuvirt.nova-test')
IMAGE_ID = '6a7e0c55-9d1b-4c3e-8f0a-00000000c0de'
STATES = {
    power_state.RUNNING: 'running',
    power_state.PAUSED: 'paused',
    power_state.SHUTDOWN: 'shutdown',
    power_state.NOSTATE: 'nostate',
    power_state.CRASHED: 'crashed',
    power_state.SUSPENDED: 'suspended',
}


class VirtAPI(virtapi.VirtAPI):
    """The compute manager's side of the driver: no ports, no events."""

    @contextlib.contextmanager
    def wait_for_instance_event(self, instance, event_names, deadline=300,
                                error_callback=None):
        if event_names:
            raise exception.NovaException('no Neutron to send %s' %
                                          event_names)
        yield


class Compute:
    def __init__(self, outdir):
        self.outdir = outdir
        self.ctx = None
        self.drv = None
        self.node = None
        self.tree = None
        self.instances = {}
        self.pci_tracker = None
        self.started = False

    # --- the database and Placement, stood in for --------------------------

    def stand_in_database(self):
        def save(inst, *args, **kwargs):
            inst.obj_reset_changes()

        def get_by_host(cls, context, host, *args, **kwargs):
            return objects.InstanceList(objects=[])

        # the instances this stand-in built (get_available_resource looks up
        # those libvirt has domains for)
        def get_by_filters(cls, context, filters, *args, **kwargs):
            uuids = filters.get('uuid')
            return objects.InstanceList(objects=[
                inst for inst in self.instances.values()
                if uuids is None or inst.uuid in uuids])

        def get_by_compute_host(cls, context, host, *args, **kwargs):
            service = objects.Service(context=context, id=1, host=host,
                                      binary='nova-compute', topic='compute',
                                      disabled=False, disabled_reason=None,
                                      forced_down=False)
            service.obj_reset_changes()
            return service

        def no_vifs(cls, context, instance_uuid, *args, **kwargs):
            return objects.VirtualInterfaceList(objects=[])

        def no_bdms(cls, context, instance_uuid, *args, **kwargs):
            return objects.BlockDeviceMappingList(objects=[])

        def no_pci_devices(cls, context, node_id, *args, **kwargs):
            return objects.PciDeviceList(objects=[])

        # Nova 30 and later: an instance's shares (spawn's device metadata)
        def no_shares(cls, context, instance_uuid, *args, **kwargs):
            return objects.ShareMappingList(objects=[])

        if hasattr(objects, 'ShareMappingList'):
            shares = objects.ShareMappingList
            shares.get_by_instance_uuid = classmethod(no_shares)
        objects.PciDevice.save = save
        objects.PciDeviceList.get_by_compute_node = classmethod(no_pci_devices)
        vifs = objects.VirtualInterfaceList
        bdms = objects.BlockDeviceMappingList
        vifs.get_by_instance_uuid = classmethod(no_vifs)

        def no_bdms_of(cls, context, instance_uuids, *args, **kwargs):
            return objects.BlockDeviceMappingList(objects=[])

        bdms.get_by_instance_uuids = classmethod(no_bdms_of)
        bdms.get_by_instance_uuid = classmethod(no_bdms)
        objects.Instance.save = save
        objects.Service.save = save
        objects.InstanceList.get_by_host = classmethod(get_by_host)
        objects.InstanceList.get_by_filters = classmethod(get_by_filters)
        objects.Service.get_by_compute_host = classmethod(get_by_compute_host)

    @staticmethod
    def stand_in_neutron():
        # every Neutron since Stein has the port binding extension; with no
        # ports there is nothing to bind
        def has_port_binding_extension(self, *args, **kwargs):
            return True

        neutron.API.has_port_binding_extension = has_port_binding_extension

    def provider(self, dev):
        name = '%s_%s' % (self.node, dev)
        data = self.drv.provider_tree.data(name)
        rcs = list(data.inventory)
        return data.uuid, rcs[0]

    def allocations(self, dev, n):
        rp, rc = self.provider(dev)
        return {rp: {'generation': 1, 'resources': {rc: n}}}

    # --- commands ---------------------------------------------------------

    def reload(self, conf):
        argv = ['nova-compute', '--config-file', conf]
        # parsed again on a reload, as a restarted nova-compute would
        CONF.clear()
        config.parse_args(argv, configure_db=False, init_rpc=False)
        if not self.started:
            logging.setup(CONF, 'nova')
            objects.register_all()
            self.stand_in_database()
            self.stand_in_neutron()
            self.started = True
        self.ctx = nova_context.get_admin_context()
        self.drv = virt_driver.load_compute_driver(VirtAPI(),
                                                   CONF.compute_driver)
        # what ComputeManager.init_host does before the driver's
        nova.conf.neutron.register_dynamic_opts(CONF)
        nova.conf.devices.register_dynamic_opts(CONF)
        self.drv.init_host(host=CONF.host)
        self.node = self.drv.get_available_nodes()[0]
        self.tree = provider_tree.ProviderTree()
        self.tree.new_root(self.node, uuidutils.generate_uuid())
        return self.node

    def inventory(self):
        self.drv.update_provider_tree(self.tree, self.node)
        out = []
        root = self.tree.data(self.node)
        for uuid in sorted(self.tree.get_provider_uuids(self.node)):
            data = self.tree.data(uuid)
            if data.parent_uuid != root.uuid:
                continue
            dev = data.name[len(self.node) + 1:]
            for rc, inv in sorted(data.inventory.items()):
                out.append('%s=%s:%d:%d' % (dev, rc, inv['total'],
                                            inv['max_unit']))
        return ' '.join(sorted(out))

    def allocate(self, dev, n):
        try:
            mdevs = self.drv._allocate_mdevs(self.allocations(dev, int(n)))
        except exception.ComputeResourcesUnavailable as e:
            return None, 'refused %s: %s' % (type(e).__name__, e)
        return ' '.join(mdevs), None

    def listed(self, uuid):
        want = 'mdev_' + uuid.replace('-', '_')
        for _ in range(120):
            for name in self.drv._host.list_mediated_devices():
                if name.startswith(want):
                    return name
            time.sleep(0.25)
        raise exception.NovaException('libvirt does not list %s' % uuid)

    def new_instance(self, name, flavor_name, extra_specs):
        n = len(self.instances) + 1
        flavor = objects.Flavor(
            id=n, flavorid='gv-%s' % flavor_name, name='gv.%s' % flavor_name,
            memory_mb=64, vcpus=1, root_gb=0, ephemeral_gb=0, swap=0,
            rxtx_factor=1.0, vcpu_weight=0, disabled=False, is_public=True,
            description=None, extra_specs=extra_specs)
        # every field set: a missing one would be lazy-loaded from the
        # database (Nova 28 and later also have compute_id)
        extra = {}
        if 'compute_id' in objects.Instance.fields:
            extra['compute_id'] = 1
        return objects.Instance(
            **extra,
            context=self.ctx, id=n, uuid=uuidutils.generate_uuid(),
            display_name=name, display_description='', hostname=name,
            host=CONF.host, node=self.node, launched_on=CONF.host,
            project_id='gpuvirt', user_id='gpuvirt', image_ref=IMAGE_ID,
            kernel_id='', ramdisk_id='', flavor=flavor, old_flavor=None,
            new_flavor=None, instance_type_id=flavor.id,
            memory_mb=flavor.memory_mb, vcpus=flavor.vcpus, root_gb=0,
            ephemeral_gb=0, os_type=None, vm_mode=None, architecture=None,
            root_device_name=None, default_ephemeral_device=None,
            default_swap_device=None, auto_disk_config=False,
            numa_topology=None, vcpu_model=None, system_metadata={},
            metadata={}, config_drive='', ephemeral_key_uuid=None,
            key_name=None, key_data=None, user_data=None, trusted_certs=None,
            resources=None, device_metadata=None, migration_context=None,
            pci_devices=objects.PciDeviceList(objects=[]),
            pci_requests=objects.InstancePCIRequests(requests=[]),
            keypairs=objects.KeyPairList(objects=[]),
            tags=objects.TagList(objects=[]),
            security_groups=objects.SecurityGroupList(objects=[]),
            services=objects.ServiceList(objects=[]),
            ec2_ids=objects.EC2Ids(instance_id="i-00000001", ami_id=None,
                                   kernel_id=None, ramdisk_id=None),
            fault=None,
            info_cache=objects.InstanceInfoCache(
                network_info=network_model.NetworkInfo([])),
            vm_state='building', task_state='spawning',
            power_state=power_state.NOSTATE, progress=0,
            availability_zone=None, cell_name=None, reservation_id='r-gv',
            launch_index=0, access_ip_v4=None, access_ip_v6=None,
            created_at=None, updated_at=None, launched_at=None,
            terminated_at=None, deleted=False, deleted_at=None,
            disable_terminate=False, shutdown_terminate=False,
            cleaned=False, locked=False, locked_by=None, hidden=False)

    def seed_image_cache(self):
        base = os.path.join(CONF.instances_path,
                            CONF.image_cache.subdirectory_name)
        os.makedirs(base, exist_ok=True)
        path = os.path.join(base, imagecache.get_cache_fname(IMAGE_ID))
        if not os.path.exists(path):
            with open(path, 'wb') as f:
                f.truncate(1 << 20)

    def spawn(self, name, dev):
        _, rc = self.provider(dev)
        inst = self.new_instance(name, rc.lower(), {'resources:%s' % rc: '1'})
        return self.build(name, inst, self.allocations(dev, 1))

    def build(self, name, inst, allocations):
        image = {'id': IMAGE_ID, 'name': 'gpuvirt-empty', 'status': 'active',
                 'disk_format': 'raw', 'container_format': 'bare',
                 'size': 1 << 20, 'min_disk': 0, 'min_ram': 0,
                 'properties': {}}
        # the image's properties, as the API records them with the instance
        inst.system_metadata = utils.get_system_metadata_from_image(
            image, inst.flavor)
        image_meta = objects.ImageMeta.from_dict(image)
        self.seed_image_cache()
        self.instances[name] = inst
        self.drv.spawn(self.ctx, inst, image_meta, injected_files=[],
                       admin_password=None,
                       allocations=allocations,
                       network_info=network_model.NetworkInfo([]),
                       block_device_info=None, power_on=False)
        guest = self.drv._host.get_guest(inst)
        guest.launch(pause=True)
        xml = guest.get_xml_desc()
        with open(os.path.join(self.outdir, name + '.xml'), 'w') as f:
            f.write(xml)
        state = STATES.get(self.drv.get_info(inst).state, 'other')
        mdevs = self.drv._get_all_assigned_mediated_devices(inst)
        pci = [dev.address for dev in inst.pci_devices]
        return ' '.join([guest.name, state] + sorted(mdevs) + sorted(pci))

    # --- PCI passthrough: the resource tracker's part ------------------------

    def pci(self):
        # what the resource tracker does with the driver's report: its PCI
        # tracker (devices matched against [pci] device_spec, kept in the
        # database: stood in for), then the PCI view of Placement
        res = self.drv.get_available_resource(self.node)
        node = objects.ComputeNode(context=self.ctx, id=1, numa_topology=None)
        self.pci_tracker = pci_manager.PciDevTracker(self.ctx, node)
        self.pci_tracker.update_devices_from_hypervisor_resources(
            res['pci_passthrough_devices'])
        out = []
        for dev in sorted(self.pci_tracker.pci_devs, key=lambda d: d.address):
            out.append('%s=%s:%s:%s:managed=%s' % (
                dev.address, dev.dev_type, dev.parent_addr, dev.status,
                dev.extra_info.get('managed', '-')))
        if CONF.pci.report_in_placement:
            pci_placement_translator.update_provider_tree_for_pci(
                self.tree, self.node, self.pci_tracker, {}, [])
            root = self.tree.data(self.node)
            for uuid in sorted(self.tree.get_provider_uuids(self.node)):
                data = self.tree.data(uuid)
                if data.parent_uuid != root.uuid:
                    continue
                for rc, inv in sorted(data.inventory.items()):
                    out.append('rp=%s:%s:%d' % (data.name[len(self.node) + 1:],
                                                rc, inv['total']))
        return ' '.join(out)

    def pcispawn(self, name, alias):
        # the scheduler's PCI request from the flavor's alias, claimed and
        # allocated by the PCI tracker as the resource tracker does
        inst = self.new_instance(name, alias,
                                 {'pci_passthrough:alias': '%s:1' % alias})
        reqs = pci_request.get_pci_requests_from_flavor(inst.flavor)
        reqs.instance_uuid = inst.uuid
        if not self.pci_tracker.claim_instance(self.ctx, reqs, None):
            return None, 'refused: no PCI device for %s' % alias
        inst.pci_requests = reqs
        self.pci_tracker.allocate_instance(inst)
        return self.build(name, inst, {}), None

    def destroy(self, name):
        inst = self.instances.pop(name)
        self.drv.destroy(self.ctx, inst, network_model.NetworkInfo([]),
                         block_device_info=None, destroy_disks=True)
        return ''

    def boot(self, name):
        inst = self.instances[name]
        # Nova 29 added the instance's shares (none here) to the signature
        args = {}
        sig = inspect.signature(self.drv.resume_state_on_host_boot)
        if 'share_info' in sig.parameters:
            args['share_info'] = objects.ShareMappingList(objects=[])
        self.drv.resume_state_on_host_boot(
            self.ctx, inst, network_model.NetworkInfo([]),
            block_device_info=None, **args)
        guest = self.drv._host.get_guest(inst)
        state = STATES.get(self.drv.get_info(inst).state, 'other')
        mdevs = self.drv._get_all_assigned_mediated_devices(inst)
        return ' '.join([guest.name, state] + sorted(mdevs))

    def compute_info(self):
        # the compute node's record as the resource tracker keeps it, from
        # the driver's own report
        res = self.drv.get_available_resource(self.node)
        return {'cpu_info': res['cpu_info'],
                'disk_available_least': res['disk_available_least'],
                'free_disk_gb': res['local_gb'] - res['local_gb_used']}

    def lmcheck(self, name, dev):
        inst = self.instances[name]
        nw_info = network_model.NetworkInfo([])
        src_info = dst_info = self.compute_info()
        # the conductor's migration record and the API's defaults
        # (block_migration=auto, no disk over-commit)
        migration = objects.Migration(
            context=self.ctx, instance_uuid=inst.uuid,
            migration_type='live-migration', status='accepted',
            source_compute=CONF.host, dest_compute=CONF.host,
            source_node=self.node, dest_node=self.node)
        dest_data = self.drv.check_can_live_migrate_destination(
            self.ctx, inst, src_info, dst_info, None, None)
        try:
            data = self.drv.check_can_live_migrate_source(
                self.ctx, inst, dest_data, block_device_info=None)
            data = self.drv.check_source_migrate_data_at_dest(
                self.ctx, inst, data, migration, None,
                self.allocations(dev, 1))
        except (exception.MigrationPreCheckError,
                exception.ComputeResourcesUnavailable) as e:
            return None, 'refused %s: %s' % (type(e).__name__,
                                             ' '.join(str(e).split()))
        finally:
            self.drv.cleanup_live_migration_destination_check(self.ctx,
                                                              dest_data)
        # the destination's pre_live_migration, then the XML the source
        # would hand libvirt for the destination
        disk_info = self.drv.get_instance_disk_info(inst)
        data = self.drv.pre_live_migration(self.ctx, inst, None, nw_info,
                                           disk_info, data)
        guest = self.drv._host.get_guest(inst)
        xml = libvirt_migration.get_updated_guest_xml(
            inst, guest, data, self.drv._get_volume_config)
        with open(os.path.join(self.outdir, name + '-dest.xml'), 'w') as f:
            f.write(xml)
        cfg = self.drv._get_mdevs_from_guest_config(xml)
        src = getattr(data, 'source_mdev_types', None) or {}
        target = getattr(data, 'target_mdevs', None) or {}
        claimed = self.drv.instance_claimed_mdevs.get(inst.uuid, [])
        dst_lm = ('dst_supports_mdev_live_migration' in data and
                  data.dst_supports_mdev_live_migration)
        return ('dst_mdev_lm=%s src=%s target=%s claimed=%s xml=%s' % (
            dst_lm,
            ','.join('%s:%s' % kv for kv in sorted(src.items())),
            ','.join('%s:%s' % kv for kv in sorted(target.items())),
            ','.join(sorted(claimed)),
            ','.join(sorted(d.uuid for d in cfg)))), None

    def serve(self, lines, out):
        for line in lines:
            words = line.split()
            if not words:
                continue
            if words[0] == 'quit':
                break
            try:
                reply = self.command(words)
            except Exception as e:  # any Nova error is the test's to see
                LOG.error('%s failed: %s', line.strip(),
                          traceback.format_exc())
                msg = ' '.join(str(e).split())
                reply = 'error %s: %s' % (type(e).__name__, msg)
            out.write(reply + '\n')
            out.flush()

    # the driver's commands: each returns its reply's text, or a pair
    # (what was done, or the refusal that is the reply)
    COMMANDS = ('reload', 'inventory', 'allocate', 'listed', 'spawn',
                'destroy', 'pci', 'pcispawn', 'boot', 'lmcheck')

    def command(self, words):
        cmd, args = words[0], words[1:]
        if cmd not in self.COMMANDS:
            return 'error unknown command %s' % cmd
        res = getattr(self, cmd)(*args)
        if isinstance(res, tuple):
            ok, refused = res
            return refused if refused else 'ok ' + ok
        return ('ok ' + res).rstrip()


def main():
    # the replies have fd 1 to themselves; anything else printed goes to
    # stderr
    out = os.fdopen(os.dup(1), 'w')
    os.dup2(2, 1)
    # Nova's modules take most of a minute to import under TCG: the test
    # sets up the GPUs and libvirtd meanwhile, and waits for this line
    out.write('ready %s\n' % version.version_info.version_string())
    out.flush()
    Compute(sys.argv[1]).serve(sys.stdin, out)


if __name__ == '__main__':
    main()
