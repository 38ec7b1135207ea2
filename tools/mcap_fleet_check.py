#!/usr/bin/env python3
"""Checks a fleet written by tools/mcap_fleet.rs against an independent decoder.

Decodes every DIR/robotNN.mcap with the Python `mcap` reader and `mcap-ros2-support` (which builds
its CDR decoder from the files' own ros2msg schema texts), recomputes every field of
DIR/fleet_truth.json from the decoded messages, and reports any difference. Also checks the
container the way rosbag2 writes it: profile ros2, ros2msg schemas with `MSG: pkg/Type`
dependency headers, cdr channels with offered_qos_profiles, summary statistics, chunk indexes,
sequences from the truth's sequence_start, publish_time == log_time, log_time rising per topic.

    pip install mcap mcap-ros2-support
    cargo run --release --example mcap_fleet -- --out /tmp/fleet --robots 2 --seconds 5
    python3 tools/mcap_fleet_check.py /tmp/fleet [MSG_DIR]

With MSG_DIR (a folder of pkg/msg/Type.msg files, e.g. shared/reference/ros2-msg), every schema
text must also equal the one rebuilt here with rosbag2's own algorithm and dependency regex.

Exits 0 when everything matches, 1 otherwise. Meant for small fleets: the decoder is pure Python.
"""

import json
import math
import os
import re
import sys
from collections import defaultdict

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

# Relative tolerance for float sums: both sides add the same values in the same order, so they
# should agree exactly; the slack only covers a future change of summation order.
REL_TOL = 1e-12


# Counters that may stay zero, so they must be reported even when nothing was counted.
COUNT_FIELDS = {
    "/joint_states": ["empty_effort_count"],
    "/scan": ["ranges_total", "pos_inf_count", "neg_inf_count", "nan_count", "empty_intensities_count"],
    "/battery_state": ["below_0_2_count", "nan_temperature_count", "cell_voltage_total",
                       "empty_cell_temperature_count"],
    "/camera/image_raw": ["data_bytes"],
    "/camera/image/compressed": ["data_bytes"],
    "/diagnostics": ["status_count", "key_value_count"],
}


class TopicAggregate:
    """Recomputes one topic's truth fields from decoded messages."""

    def __init__(self, topic, message_type):
        self.topic = topic
        self.add_decoded = getattr(self, "add_" + topic.strip("/").replace("/", "_"))
        self.fields = {"message_type": message_type, "message_count": 0, "payload_bytes": 0}
        self.frame_ids = set()
        self.sums = defaultdict(float)
        self.counts = defaultdict(int, {name: 0 for name in COUNT_FIELDS.get(topic, [])})
        self.level_counts = defaultdict(int)
        self.error_count_by_node = defaultdict(int)
        self.status_level_counts = defaultdict(int)
        self.minimums = {}
        self.maximums = {}
        self.constants = {}
        self.last = {}

    def minimum(self, key, value):
        self.minimums[key] = min(self.minimums.get(key, math.inf), value)

    def maximum(self, key, value):
        self.maximums[key] = max(self.maximums.get(key, 0.0), value)

    def constant(self, key, value):
        """A value the generator keeps fixed per file; any change is itself a mismatch."""
        previous = self.constants.setdefault(key, value)
        if previous != value:
            self.constants[key] = f"varies: {previous!r} then {value!r}"

    def add(self, message, decoded):
        fields = self.fields
        if fields["message_count"] == 0:
            fields["first_log_time_ns"] = message.log_time
        fields["message_count"] += 1
        fields["last_log_time_ns"] = message.log_time
        fields["payload_bytes"] += len(message.data)
        header = getattr(decoded, "header", None)
        self.frame_ids.add(header.frame_id if header is not None else "")
        self.add_decoded(decoded)

    def add_joint_states(self, m):
        self.constant("joint_count", len(m.name))
        self.sums["sum_position_0"] += m.position[0]
        self.sums["sum_velocity_0"] += m.velocity[0]
        if len(m.effort) == 0:
            self.counts["empty_effort_count"] += 1
        for effort in m.effort:
            self.maximum("max_abs_effort", abs(effort))

    def add_imu(self, m):
        self.sums["sum_linear_acceleration_z"] += m.linear_acceleration.z
        self.sums["sum_angular_velocity_z"] += m.angular_velocity.z

    def add_odom(self, m):
        self.constant("child_frame_id", m.child_frame_id)
        self.sums["sum_pose_position_x"] += m.pose.pose.position.x
        self.sums["sum_twist_linear_x"] += m.twist.twist.linear.x
        self.last["last_pose_position_x"] = m.pose.pose.position.x

    def add_scan(self, m):
        self.constant("beam_count", len(m.ranges))
        self.counts["ranges_total"] += len(m.ranges)
        for r in m.ranges:
            if math.isnan(r):
                self.counts["nan_count"] += 1
            elif r == math.inf:
                self.counts["pos_inf_count"] += 1
            elif r == -math.inf:
                self.counts["neg_inf_count"] += 1
            else:
                self.sums["sum_finite_ranges"] += r
                self.minimum("min_finite_range", r)
        if len(m.intensities) == 0:
            self.counts["empty_intensities_count"] += 1
        elif len(m.intensities) != len(m.ranges):
            self.constants["intensities_length"] = "differs from ranges"

    def add_battery_state(self, m):
        self.sums["sum_percentage"] += m.percentage
        self.minimum("min_percentage", m.percentage)
        self.last["last_percentage"] = m.percentage
        if m.percentage < 0.2:
            self.counts["below_0_2_count"] += 1
        if math.isnan(m.temperature):
            self.counts["nan_temperature_count"] += 1
        self.constant("cell_count", len(m.cell_voltage))
        self.counts["cell_voltage_total"] += len(m.cell_voltage)
        if len(m.cell_temperature) == 0:
            self.counts["empty_cell_temperature_count"] += 1

    def add_camera_image_raw(self, m):
        self.constant("width", m.width)
        self.constant("height", m.height)
        self.constant("encoding", m.encoding)
        self.counts["data_bytes"] += len(m.data)
        if m.step * m.height != len(m.data):
            self.constants["step"] = "step * height != len(data)"

    def add_camera_image_compressed(self, m):
        self.constant("format", m.format)
        self.counts["data_bytes"] += len(m.data)

    def add_rosout(self, m):
        self.level_counts[str(m.level)] += 1
        if m.level == 40:
            self.error_count_by_node[m.name] += 1

    def add_diagnostics(self, m):
        self.counts["status_count"] += len(m.status)
        for status in m.status:
            self.counts["key_value_count"] += len(status.values)
            self.status_level_counts[str(status.level)] += 1

    def result(self):
        topic = self.topic
        out = dict(self.fields)
        out["frame_id"] = self.frame_ids.pop() if len(self.frame_ids) == 1 else sorted(self.frame_ids)
        out.update(self.sums)
        out.update(self.counts)
        out.update(self.minimums)
        out.update(self.maximums)
        out.update(self.constants)
        out.update(self.last)
        if topic == "/rosout":
            out["level_counts"] = {str(level): self.level_counts.get(str(level), 0) for level in (10, 20, 30, 40, 50)}
            out["error_count_by_node"] = dict(self.error_count_by_node)
        if topic == "/diagnostics":
            out["status_level_counts"] = {str(level): self.status_level_counts.get(str(level), 0) for level in range(4)}
        return out


# rosbag2_cpp local_message_definition_source.cpp: field types of a .msg text.
MSG_FIELD_TYPE_REGEX = re.compile(r"(?:^|\n)\s*([a-zA-Z0-9_/]+)(?:\[[^\]]*\])?\s+")
PRIMITIVE_TYPES = {"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16",
                   "int32", "uint32", "int64", "uint64", "string"}


def rosbag2_schema_text(msg_dir, schema_name):
    """The ros2msg text rosbag2's LocalMessageDefinitionSource::get_full_text builds."""
    seen = set()

    def append(type_name):
        package, _, name = type_name.replace("/msg/", "/").partition("/")
        with open(os.path.join(msg_dir, package, "msg", name + ".msg"), encoding="utf-8", newline="") as f:
            text = f.read()
        dependencies = set()
        for match in MSG_FIELD_TYPE_REGEX.finditer(text):
            field_type = match.group(1)
            if field_type not in PRIMITIVE_TYPES:
                dependencies.add(field_type if "/" in field_type else f"{package}/{field_type}")
        result = text
        for dependency in sorted(dependencies, key=lambda d: d.encode()):
            if dependency not in seen:
                seen.add(dependency)
                result += "\n" + "=" * 80 + "\nMSG: " + dependency + "\n" + append(dependency)
        return result

    return append(schema_name)


def same(expected, observed):
    if isinstance(expected, float) or isinstance(observed, float):
        if isinstance(expected, (int, float)) and isinstance(observed, (int, float)):
            return math.isclose(expected, observed, rel_tol=REL_TOL, abs_tol=1e-12)
        return False
    if isinstance(expected, dict) and isinstance(observed, dict):
        return expected.keys() == observed.keys() and all(same(expected[k], observed[k]) for k in expected)
    return expected == observed


def check_container(path, reader, truth, msg_dir, problems):
    header = reader.get_header()
    if header.profile != "ros2":
        problems.append(f"{path}: profile {header.profile!r}, not 'ros2'")
    summary = reader.get_summary()
    if summary is None or summary.statistics is None or not summary.chunk_indexes:
        problems.append(f"{path}: no summary, statistics or chunk indexes")
        return
    for schema in summary.schemas.values():
        text = schema.data.decode()
        if msg_dir and text != rosbag2_schema_text(msg_dir, schema.name):
            problems.append(f"{path}: {schema.name}: schema text differs from rosbag2's")
        if schema.encoding != "ros2msg" or "/msg/" not in schema.name:
            problems.append(f"{path}: schema {schema.name} encoding {schema.encoding!r}")
        for line in text.split("\n"):
            if line.startswith("MSG: ") and "/msg/" in line:
                problems.append(f"{path}: {schema.name}: dependency header {line!r} is not rosbag2's spelling")
        if "\n" + "=" * 80 + "\nMSG: " not in text:
            # every generated type has at least one dependency (Header or Time)
            problems.append(f"{path}: {schema.name}: no MSG: dependency section")
    for channel in summary.channels.values():
        if channel.message_encoding != "cdr" or "offered_qos_profiles" not in channel.metadata:
            problems.append(f"{path}: channel {channel.topic}: encoding/metadata not like rosbag2")
    compressions = {index.compression for index in summary.chunk_indexes}
    wanted = "" if truth["compression"] == "none" else truth["compression"]
    if compressions != {wanted}:
        problems.append(f"{path}: chunk compressions {compressions}, expected {{{wanted!r}}}")
    if not any(m.name == "rosbag2" for m in reader.iter_metadata()):
        problems.append(f"{path}: no rosbag2 metadata record")
    return summary.statistics


def check_file(directory, expected, truth, msg_dir, problems):
    path = os.path.join(directory, expected["file"])
    aggregates = {}
    last_sequence = {}
    last_log_time = {}
    with open(path, "rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        statistics = check_container(path, reader, truth, msg_dir, problems)
        for schema, channel, message, decoded in reader.iter_decoded_messages(log_time_order=False):
            topic = channel.topic
            if topic not in aggregates:
                aggregates[topic] = TopicAggregate(topic, schema.name)
            aggregates[topic].add(message, decoded)
            want_sequence = last_sequence.get(topic, truth["sequence_start"] - 1) + 1
            if message.sequence != want_sequence:
                problems.append(f"{path} {topic}: sequence {message.sequence}, expected {want_sequence}")
            last_sequence[topic] = message.sequence
            if message.publish_time != message.log_time:
                problems.append(f"{path} {topic}: publish_time != log_time")
            if message.log_time <= last_log_time.get(topic, -1):
                problems.append(f"{path} {topic}: log_time does not rise")
            last_log_time[topic] = message.log_time

    observed = {
        "recording": expected["recording"],
        "file": expected["file"],
        "file_bytes": os.path.getsize(path),
        "message_count": sum(a.fields["message_count"] for a in aggregates.values()),
        "start_time_ns": min(a.fields["first_log_time_ns"] for a in aggregates.values()),
        "end_time_ns": max(a.fields["last_log_time_ns"] for a in aggregates.values()),
        "topics": {topic: a.result() for topic, a in aggregates.items()},
    }
    if statistics is not None and statistics.message_count != observed["message_count"]:
        problems.append(f"{path}: summary statistics say {statistics.message_count} messages")
    compare(path, expected, observed, problems)
    return observed


def compare(where, expected, observed, problems):
    for key in sorted(set(expected) | set(observed)):
        if key not in observed:
            problems.append(f"{where}: {key}: in the truth, not recomputed")
        elif key not in expected:
            problems.append(f"{where}: {key}: recomputed {observed[key]!r}, missing from the truth")
        elif isinstance(expected[key], dict) and key in ("topics",):
            for topic in sorted(set(expected[key]) | set(observed[key])):
                compare(f"{where} {topic}", expected[key].get(topic, {}), observed[key].get(topic, {}), problems)
        elif not same(expected[key], observed[key]):
            problems.append(f"{where}: {key}: truth {expected[key]!r}, decoded {observed[key]!r}")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    directory = sys.argv[1]
    msg_dir = sys.argv[2] if len(sys.argv) == 3 else None
    with open(os.path.join(directory, "fleet_truth.json")) as f:
        truth = json.load(f)
    problems = []
    messages_per_topic = defaultdict(int)
    for expected in truth["files"]:
        observed = check_file(directory, expected, truth, msg_dir, problems)
        for topic, fields in observed["topics"].items():
            messages_per_topic[topic] += fields["message_count"]
        print(f"{expected['file']}: {observed['message_count']} messages decoded, "
              f"{len(observed['topics'])} topics")
    totals = truth["totals"]
    if dict(messages_per_topic) != totals["messages_per_topic"]:
        problems.append(f"totals: messages_per_topic {totals['messages_per_topic']} vs decoded {dict(messages_per_topic)}")
    if sum(messages_per_topic.values()) != totals["message_count"]:
        problems.append("totals: message_count differs")
    for problem in problems:
        print("MISMATCH", problem)
    checked = sum(len(t) for f in truth["files"] for t in f["topics"].values())
    print(f"{'FAIL' if problems else 'OK'}: {len(truth['files'])} files, {checked} truth fields checked, "
          f"{len(problems)} mismatches")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
