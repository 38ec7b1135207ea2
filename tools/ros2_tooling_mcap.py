#!/usr/bin/env python3
"""Writes a ROS 2 MCAP recording with the ROS tooling's own encoder (pip `mcap` +
`mcap-ros2-support`, whose CDR writer is independent of Brewric's decoder and of
tools/mcap_fleet.rs), and the rows Brewric must read back from it, for
tests/mcap_ros_tooling.rs.

    python3 tools/ros2_tooling_mcap.py OUT.mcap OUT.json [MSG_DIR]

MSG_DIR is a folder of pkg/msg/Type.msg files (default ../shared/reference/ros2-msg);
each schema text is built as rosbag2 builds it (`MSG: pkg/Type` dependency headers).
OUT.json: {"<table>": {"columns": [SQL expressions], "rows": [[values…], …]}} with rows
ordered by sequence (child tables by sequence, then their index columns); timestamps are
integer nanoseconds (the SQL uses epoch_ns), floats chosen exactly representable.
"""

import json
import os
import sys

from mcap_ros2.writer import Writer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
from mcap_fleet_check import rosbag2_schema_text  # noqa: E402

T0 = 1_767_600_000_000_000_000  # 2026-01-05T08:00:00Z


def stamp(ns):
    return {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}


def main():
    out_mcap, out_json = sys.argv[1], sys.argv[2]
    msg_dir = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "..", "..", "shared", "reference", "ros2-msg")
    tables = {}

    def table(name, columns):
        return tables.setdefault(name, {"columns": columns, "rows": []})

    with open(out_mcap, "wb") as f:
        w = Writer(f)
        schemas = {}

        def write(topic, type_name, message, i, log_time):
            if type_name not in schemas:
                schemas[type_name] = w.register_msgdef(type_name, rosbag2_schema_text(msg_dir, type_name))
            w.write_message(topic, schemas[type_name], message, log_time=log_time, publish_time=log_time + 7,
                            sequence=i + 1)

        joints = table("joint_states", ["sequence", "epoch_ns(log_time)", "epoch_ns(publish_time)",
                                        "epoch_ns(header_stamp)", "header_frame_id", "name", "position", "velocity",
                                        "effort"])
        scans = table("scan", ["sequence", "epoch_ns(header_stamp)", "angle_min", "angle_increment", "range_max",
                               "ranges", "intensities"])
        batteries = table("battery_state", ["sequence", "voltage", "percentage", "power_supply_status",
                                            "present", "cell_voltage", "location", "serial_number"])
        logs = table("rosout", ["sequence", "epoch_ns(stamp)", "level", "name", "msg", "file", "function", "line"])
        odoms = table("odom", ["sequence", "child_frame_id", "pose_pose_position_x", "pose_pose_orientation_w",
                               "pose_covariance", "twist_twist_angular_z"])
        statuses = table("diagnostics_status", ["sequence", "status_idx", "level", "name", "message", "hardware_id"])
        values = table("diagnostics_status_values", ["sequence", "status_idx", "values_idx", "key", "value"])

        for i in range(40):
            t = T0 + i * 10_000_000 + 123
            names = ["shoulder", "elbow", "wrist"]
            position = [0.5 * i, -1.25, 3.0 + i]
            velocity = [] if i % 5 == 0 else [0.25, 0.5, 0.75]
            effort = [float(i), -2.5, 1024.0]
            write("/joint_states", "sensor_msgs/msg/JointState",
                  {"header": {"stamp": stamp(t - 1000), "frame_id": "arm"}, "name": names, "position": position,
                   "velocity": velocity, "effort": effort}, i, t)
            joints["rows"].append([i + 1, t, t + 7, t - 1000, "arm", names, position, velocity, effort])

            if i % 4 == 0:
                ranges = [1.5, 2.25, float(i) + 0.5, 100.0]
                intensities = [] if i % 8 == 0 else [7.0, 8.0, 9.0, 10.0]
                write("/scan", "sensor_msgs/msg/LaserScan",
                      {"header": {"stamp": stamp(t), "frame_id": "laser"}, "angle_min": -1.5, "angle_max": 1.5,
                       "angle_increment": 0.75, "time_increment": 0.0, "scan_time": 0.125, "range_min": 0.25,
                       "range_max": 30.0, "ranges": ranges, "intensities": intensities}, i // 4, t)
                scans["rows"].append([i // 4 + 1, t, -1.5, 0.75, 30.0, ranges, intensities])

            if i % 10 == 0:
                k = i // 10
                cells = [3.5, 3.75, 4.0]
                write("/battery_state", "sensor_msgs/msg/BatteryState",
                      {"header": {"stamp": stamp(t), "frame_id": "battery"}, "voltage": 24.5, "temperature": 30.0,
                       "current": -1.5, "charge": 10.0, "capacity": 20.0, "design_capacity": 20.0,
                       "percentage": 0.75 - 0.25 * k, "power_supply_status": 2, "power_supply_health": 1,
                       "power_supply_technology": 2, "present": k % 2 == 0, "cell_voltage": cells,
                       "cell_temperature": [], "location": "base", "serial_number": f"SN-{k}"}, k, t)
                batteries["rows"].append([k + 1, 24.5, 0.75 - 0.25 * k, 2, k % 2 == 0, cells, "base", f"SN-{k}"])

                write("/rosout", "rcl_interfaces/msg/Log",
                      {"stamp": stamp(t), "level": 40 if k == 2 else 20, "name": "planner", "msg": f"step {k} ✓",
                       "file": "planner.cpp", "function": "plan", "line": 100 + k}, k, t + 1)
                logs["rows"].append([k + 1, t, 40 if k == 2 else 20, "planner", f"step {k} ✓", "planner.cpp", "plan",
                                     100 + k])

                covariance = [float(j) for j in range(36)]
                write("/odom", "nav_msgs/msg/Odometry",
                      {"header": {"stamp": stamp(t), "frame_id": "odom"}, "child_frame_id": "base_link",
                       "pose": {"pose": {"position": {"x": 1.5 * k, "y": 0.0, "z": 0.0},
                                         "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}},
                                "covariance": covariance},
                       "twist": {"twist": {"linear": {"x": 0.5, "y": 0.0, "z": 0.0},
                                           "angular": {"x": 0.0, "y": 0.0, "z": -0.25}},
                                 "covariance": [0.0] * 36}}, k, t + 2)
                odoms["rows"].append([k + 1, "base_link", 1.5 * k, 1.0, covariance, -0.25])

                status = []
                for s in range(k % 3 + 1):
                    kv = [{"key": f"k{s}{v}", "value": f"v{k}{s}{v}"} for v in range(s + 1)]
                    status.append({"level": s, "name": f"dev{s}", "message": "ok" if s == 0 else "warn",
                                   "hardware_id": f"hw{k}", "values": kv})
                    statuses["rows"].append([k + 1, s, s, f"dev{s}", "ok" if s == 0 else "warn", f"hw{k}"])
                    for v, pair in enumerate(kv):
                        values["rows"].append([k + 1, s, v, pair["key"], pair["value"]])
                write("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray",
                      {"header": {"stamp": stamp(t), "frame_id": ""}, "status": status}, k, t + 3)
        w.finish()

    with open(out_json, "w") as f:
        json.dump(tables, f)


if __name__ == "__main__":
    main()
