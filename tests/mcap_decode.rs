//! MCAP + ROS 2 decoding end to end: files written by the `mcap` crate's
//! Writer (chunked with zstd, lz4 and no compression, and unchunked), with
//! CDR payloads from the small encoder below (written for this test,
//! independent of the decoder), read back through the sans-io stream fed in
//! random piece sizes and through the summary (chunk by chunk, also from
//! several threads), every decoded value compared with what was written.
//! Then the bad inputs: truncated files, a bad chunk CRC, corrupt zstd, a
//! schema that does not parse, short messages (rolled back), unknown
//! encodings (stored raw), uint64 overflow, big-endian and PL_CDR payloads,
//! and the pitfalls of reference/mcap.md §6.

use std::collections::BTreeMap;
use std::io::Cursor;

use brewric::exec::vector::Column;
use brewric::ingest::mcap::{
    parse_ros2msg, BlobRef, Channels, DecodeOptions, Decoder, Encoding, Ending, IndexedFile,
    Location, McapError, McapStream, ReaderOptions, Record, TopicBatch,
};
use brewric::types::array::{ArrayElem, ArrayValue};
use brewric::types::{DataType, Datum};

/// The server's allocator, so the speed check measures what brewricd does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The .msg texts of ros2/common_interfaces and ros2/rcl_interfaces (Apache-2.0), verbatim.
mod msg {
    pub const TIME: &str = r#"# This message communicates ROS Time defined here:
# https://design.ros2.org/articles/clock_and_time.html

# The seconds component, valid over all int32 values.
int32 sec

# The nanoseconds component, valid in the range [0, 1e9).
uint32 nanosec
"#;
    pub const HEADER: &str = r#"# Standard metadata for higher-level stamped data types.
# This is generally used to communicate timestamped data
# in a particular coordinate frame.

# Two-integer timestamp that is expressed as seconds and nanoseconds.
builtin_interfaces/Time stamp

# Transform frame with which this data is associated.
string frame_id
"#;
    pub const POINT: &str = r#"# This contains the position of a point in free space
float64 x
float64 y
float64 z
"#;
    pub const VECTOR3: &str = r#"# This represents a vector in free space.

# This is semantically different than a point.
# A vector is always anchored at the origin.
# When a transform is applied to a vector, only the rotational component is applied.

float64 x
float64 y
float64 z
"#;
    pub const QUATERNION: &str = r#"# This represents an orientation in free space in quaternion form.

float64 x 0
float64 y 0
float64 z 0
float64 w 1
"#;
    pub const POSE: &str = r#"# A representation of pose in free space, composed of position and orientation.

Point position
Quaternion orientation
"#;
    pub const TWIST: &str = r#"# This expresses velocity in free space broken into its linear and angular parts.

Vector3  linear
Vector3  angular
"#;
    pub const POSE_WITH_COVARIANCE: &str = r#"# This represents a pose in free space with uncertainty.

Pose pose

# Row-major representation of the 6x6 covariance matrix
# The orientation parameters use a fixed-axis representation.
# In order, the parameters are:
# (x, y, z, rotation about X axis, rotation about Y axis, rotation about Z axis)
float64[36] covariance
"#;
    pub const TWIST_WITH_COVARIANCE: &str = r#"# This expresses velocity in free space with uncertainty.

Twist twist

# Row-major representation of the 6x6 covariance matrix
# The orientation parameters use a fixed-axis representation.
# In order, the parameters are:
# (x, y, z, rotation about X axis, rotation about Y axis, rotation about Z axis)
float64[36] covariance
"#;
    pub const JOINT_STATE: &str = r#"# This is a message that holds data to describe the state of a set of torque controlled joints.
#
# The state of each joint (revolute or prismatic) is defined by:
#  * the position of the joint (rad or m),
#  * the velocity of the joint (rad/s or m/s) and
#  * the effort that is applied in the joint (Nm or N).
#
# Each joint is uniquely identified by its name
# The header specifies the time at which the joint states were recorded. All the joint states
# in one message have to be recorded at the same time.
#
# This message consists of a multiple arrays, one for each part of the joint state.
# The goal is to make each of the fields optional. When e.g. your joints have no
# effort associated with them, you can leave the effort array empty.
#
# All arrays in this message should have the same size, or be empty.
# This is the only way to uniquely associate the joint name with the correct
# states.

std_msgs/Header header

string[] name
float64[] position
float64[] velocity
float64[] effort
"#;
    pub const IMU: &str = r#"# This is a message to hold data from an IMU (Inertial Measurement Unit)
#
# Accelerations should be in m/s^2 (not in g's), and rotational velocity should be in rad/sec
#
# If the covariance of the measurement is known, it should be filled in (if all you know is the
# variance of each measurement, e.g. from the datasheet, just put those along the diagonal)
# A covariance matrix of all zeros will be interpreted as "covariance unknown", and to use the
# data a covariance will have to be assumed or gotten from some other source
#
# If you have no estimate for one of the data elements (e.g. your IMU doesn't produce an
# orientation estimate), please set element 0 of the associated covariance matrix to -1
# If you are interpreting this message, please check for a value of -1 in the first element of each
# covariance matrix, and disregard the associated estimate.

std_msgs/Header header

geometry_msgs/Quaternion orientation
float64[9] orientation_covariance # Row major about x, y, z axes

geometry_msgs/Vector3 angular_velocity
float64[9] angular_velocity_covariance # Row major about x, y, z axes

geometry_msgs/Vector3 linear_acceleration
float64[9] linear_acceleration_covariance # Row major x, y z
"#;
    pub const ODOMETRY: &str = r#"# This represents an estimate of a position and velocity in free space.
# The pose in this message should be specified in the coordinate frame given by header.frame_id
# The twist in this message should be specified in the coordinate frame given by the child_frame_id

# Includes the frame id of the pose parent.
std_msgs/Header header

# Frame id the pose points to. The twist is in this coordinate frame.
string child_frame_id

# Estimated pose that is typically relative to a fixed world frame.
geometry_msgs/PoseWithCovariance pose

# Estimated linear and angular velocity relative to child_frame_id.
geometry_msgs/TwistWithCovariance twist
"#;
    pub const LASER_SCAN: &str = r#"# Single scan from a planar laser range-finder
#
# If you have another ranging device with different behavior (e.g. a sonar
# array), please find or create a different message, since applications
# will make fairly laser-specific assumptions about this data

std_msgs/Header header # timestamp in the header is the acquisition time of
                             # the first ray in the scan.
                             #
                             # in frame frame_id, angles are measured around
                             # the positive Z axis (counterclockwise, if Z is up)
                             # with zero angle being forward along the x axis

float32 angle_min            # start angle of the scan [rad]
float32 angle_max            # end angle of the scan [rad]
float32 angle_increment      # angular distance between measurements [rad]

float32 time_increment       # time between measurements [seconds] - if your scanner
                             # is moving, this will be used in interpolating position
                             # of 3d points
float32 scan_time            # time between scans [seconds]

float32 range_min            # minimum range value [m]
float32 range_max            # maximum range value [m]

float32[] ranges             # range data [m]
                             # (Note: values < range_min or > range_max should be discarded)
float32[] intensities        # intensity data [device-specific units].  If your
                             # device does not provide intensities, please leave
                             # the array empty.
"#;
    pub const BATTERY_STATE: &str = r#"
# Constants are chosen to match the enums in the linux kernel
# defined in include/linux/power_supply.h as of version 3.7
# The one difference is for style reasons the constants are
# all uppercase not mixed case.

# Power supply status constants
uint8 POWER_SUPPLY_STATUS_UNKNOWN = 0
uint8 POWER_SUPPLY_STATUS_CHARGING = 1
uint8 POWER_SUPPLY_STATUS_DISCHARGING = 2
uint8 POWER_SUPPLY_STATUS_NOT_CHARGING = 3
uint8 POWER_SUPPLY_STATUS_FULL = 4

# Power supply health constants
uint8 POWER_SUPPLY_HEALTH_UNKNOWN = 0
uint8 POWER_SUPPLY_HEALTH_GOOD = 1
uint8 POWER_SUPPLY_HEALTH_OVERHEAT = 2
uint8 POWER_SUPPLY_HEALTH_DEAD = 3
uint8 POWER_SUPPLY_HEALTH_OVERVOLTAGE = 4
uint8 POWER_SUPPLY_HEALTH_UNSPEC_FAILURE = 5
uint8 POWER_SUPPLY_HEALTH_COLD = 6
uint8 POWER_SUPPLY_HEALTH_WATCHDOG_TIMER_EXPIRE = 7
uint8 POWER_SUPPLY_HEALTH_SAFETY_TIMER_EXPIRE = 8

# Power supply technology (chemistry) constants
uint8 POWER_SUPPLY_TECHNOLOGY_UNKNOWN = 0 # Unknown battery technology
uint8 POWER_SUPPLY_TECHNOLOGY_NIMH = 1    # Nickel-Metal Hydride battery
uint8 POWER_SUPPLY_TECHNOLOGY_LION = 2    # Lithium-ion battery
uint8 POWER_SUPPLY_TECHNOLOGY_LIPO = 3    # Lithium Polymer battery
uint8 POWER_SUPPLY_TECHNOLOGY_LIFE = 4    # Lithium Iron Phosphate battery
uint8 POWER_SUPPLY_TECHNOLOGY_NICD = 5    # Nickel-Cadmium battery
uint8 POWER_SUPPLY_TECHNOLOGY_LIMN = 6    # Lithium Manganese Dioxide battery
uint8 POWER_SUPPLY_TECHNOLOGY_TERNARY = 7 # Ternary Lithium battery
uint8 POWER_SUPPLY_TECHNOLOGY_VRLA = 8    # Valve Regulated Lead-Acid battery

std_msgs/Header  header
float32 voltage          # Voltage in Volts (Mandatory)
float32 temperature      # Temperature in Degrees Celsius (If unmeasured NaN)
float32 current          # Negative when discharging (A)  (If unmeasured NaN)
float32 charge           # Current charge in Ah  (If unmeasured NaN)
float32 capacity         # Capacity in Ah (last full capacity)  (If unmeasured NaN)
float32 design_capacity  # Capacity in Ah (design capacity)  (If unmeasured NaN)
float32 percentage       # Charge percentage on 0 to 1 range  (If unmeasured NaN)
uint8   power_supply_status     # The charging status as reported. Values defined above
uint8   power_supply_health     # The battery health metric. Values defined above
uint8   power_supply_technology # The battery chemistry. Values defined above
bool    present          # True if the battery is present

float32[] cell_voltage   # An array of individual cell voltages for each cell in the pack
                         # If individual voltages unknown but number of cells known set each to NaN
float32[] cell_temperature # An array of individual cell temperatures for each cell in the pack
                           # If individual temperatures unknown but number of cells known set each to NaN
string location          # The location into which the battery is inserted. (slot number or plug)
string serial_number     # The best approximation of the battery serial number
"#;
    pub const IMAGE: &str = r#"# This message contains an uncompressed image
# (0, 0) is at top-left corner of image

std_msgs/Header header # Header timestamp should be acquisition time of image
                             # Header frame_id should be optical frame of camera
                             # origin of frame should be optical center of cameara
                             # +x should point to the right in the image
                             # +y should point down in the image
                             # +z should point into to plane of the image
                             # If the frame_id here and the frame_id of the CameraInfo
                             # message associated with the image conflict
                             # the behavior is undefined

uint32 height                # image height, that is, number of rows
uint32 width                 # image width, that is, number of columns

# The legal values for encoding are in file include/sensor_msgs/image_encodings.hpp
# If you want to standardize a new string format, join
# ros-users@lists.ros.org and send an email proposing a new encoding.

string encoding       # Encoding of pixels -- channel meaning, ordering, size
                      # taken from the list of strings in include/sensor_msgs/image_encodings.hpp

uint8 is_bigendian    # is this data bigendian?
uint32 step           # Full row length in bytes
uint8[] data          # actual matrix data, size is (step * rows)
"#;
    pub const COMPRESSED_IMAGE: &str = r#"# This message contains a compressed image.

std_msgs/Header header # Header timestamp should be acquisition time of image
                             # Header frame_id should be optical frame of camera
                             # origin of frame should be optical center of cameara
                             # +x should point to the right in the image
                             # +y should point down in the image
                             # +z should point into to plane of the image

string format                # Specifies the format of the data
                             # Acceptable values differ by the image transport used:
                             # - compressed_image_transport:
                             #     ORIG_PIXFMT; CODEC compressed [COMPRESSED_PIXFMT]
                             #   where:
                             #   - ORIG_PIXFMT is pixel format of the raw image, i.e.
                             #     the content of sensor_msgs/Image/encoding with
                             #     values from include/sensor_msgs/image_encodings.h
                             #   - CODEC is one of [jpeg, png, tiff]
                             #   - COMPRESSED_PIXFMT is only appended for color images
                             #     and is the pixel format used by the compression
                             #     algorithm. Valid values for jpeg encoding are:
                             #     [bgr8, rgb8]. Valid values for png encoding are:
                             #     [bgr8, rgb8, bgr16, rgb16].
                             #   If the field is empty or does not correspond to the
                             #   above pattern, the image is treated as bgr8 or mono8
                             #   jpeg image (depending on the number of channels).
                             # - compressed_depth_image_transport:
                             #     ORIG_PIXFMT; compressedDepth CODEC
                             #   where:
                             #   - ORIG_PIXFMT is pixel format of the raw image, i.e.
                             #     the content of sensor_msgs/Image/encoding with
                             #     values from include/sensor_msgs/image_encodings.h
                             #     It is usually one of [16UC1, 32FC1].
                             #   - CODEC is one of [png, rvl]
                             #   If the field is empty or does not correspond to the
                             #   above pattern, the image is treated as png image.
                             # - Other image transports can store whatever values they
                             #   need for successful decoding of the image. Refer to
                             #   documentation of the other transports for details.

uint8[] data                 # Compressed image buffer
"#;
    pub const LOG: &str = r#"##
## Severity level constants
## 
## These logging levels follow the Python Standard
## https://docs.python.org/3/library/logging.html#logging-levels
## And are implemented in rcutils as well
## https://github.com/ros2/rcutils/blob/35f29850064e0c33a4063cbc947ebbfeada11dba/include/rcutils/logging.h#L164-L172
## This leaves space for other standard logging levels to be inserted in the middle in the future,
## as well as custom user defined levels.
## Since there are several other logging enumeration standard for different implementations,
## other logging implementations may need to provide level mappings to match their internal implementations.
##

# Debug is for pedantic information, which is useful when debugging issues.
uint8 DEBUG=10

# Info is the standard informational level and is used to report expected
# information.
uint8 INFO=20

# Warning is for information that may potentially cause issues or possibly unexpected
# behavior.
uint8 WARN=30

# Error is for information that this node cannot resolve.
uint8 ERROR=40

# Information about a impending node shutdown.
uint8 FATAL=50

##
## Fields
##

# Timestamp when this message was generated by the node.
builtin_interfaces/Time stamp

# Corresponding log level, see above definitions.
uint8 level

# The name representing the logger this message came from.
string name

# The full log message.
string msg

# The file the message came from.
string file

# The function the message came from.
string function

# The line in the file the message came from.
uint32 line
"#;
    pub const DIAGNOSTIC_ARRAY: &str = r#"# This message is used to send diagnostic information about the state of the robot.
std_msgs/Header header # for timestamp
DiagnosticStatus[] status # an array of components being reported on
"#;
    pub const DIAGNOSTIC_STATUS: &str = r#"# This message holds the status of an individual component of the robot.

# Possible levels of operations.
byte OK=0
byte WARN=1
byte ERROR=2
byte STALE=3

# Level of operation enumerated above.
byte level
# A description of the test/component reporting.
string name
# A description of the status.
string message
# A hardware unique string.
string hardware_id
# An array of values associated with the status.
KeyValue[] values

"#;
    pub const KEY_VALUE: &str = r#"# What to label this value when viewing.
string key
# A value to track over time.
string value
"#;
}

const SEPARATOR: &str =
    "================================================================================";

/// rosbag2's layout: the top type's text, then each dependency after a
/// separator and `MSG: <name>`.
fn ros2msg(top: &str, deps: &[(&str, &str)]) -> String {
    let mut s = top.to_string();
    for (name, text) in deps {
        s.push('\n');
        s.push_str(SEPARATOR);
        s.push_str("\nMSG: ");
        s.push_str(name);
        s.push('\n');
        s.push_str(text);
    }
    s
}

/// A test-only custom type covering every builtin and shape.
const EDGE: &str = "# every builtin\nbool flag\nbyte b\nchar c\nint8 i8\nuint8 u8\nint16 i16\n\
uint16 u16\nint32 i32\nuint32 u32\nint64 i64\nuint64 u64\n\
builtin_interfaces/Duration dur\nbuiltin_interfaces/Time[] times\nbool[] flags\n\
uint16[3] triple\nint8[] small\nstring<=8[<=4] words\nuint8[4] quad\nEmpty nothing\n\
float64 after_empty\nint64 sequence\nint32 X=5\nstring S=\"a # b\"\n";
const EMPTY: &str = "# no fields\n";
const DURATION: &str = "int32 sec\nuint32 nanosec\n";

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0
    }
    fn f32(&mut self) -> f32 {
        self.f64() as f32
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Plain CDR, written field by field: alignment counted from after the
/// 4-byte encapsulation header, padding zero.
struct Cdr {
    buf: Vec<u8>,
    be: bool,
}

impl Cdr {
    fn new(be: bool) -> Self {
        Cdr {
            buf: vec![0, if be { 0 } else { 1 }, 0, 0],
            be,
        }
    }
    fn align(&mut self, n: usize) {
        while !(self.buf.len() - 4).is_multiple_of(n) {
            self.buf.push(0);
        }
    }
    fn raw<const N: usize>(&mut self, mut le: [u8; N]) {
        self.align(N);
        if self.be {
            le.reverse();
        }
        self.buf.extend_from_slice(&le);
    }
    fn bool(&mut self, v: bool) {
        self.raw([v as u8]);
    }
    fn u8(&mut self, v: u8) {
        self.raw([v]);
    }
}

/// The numeric writers: each value's little-endian bytes, aligned to its size.
macro_rules! cdr_numbers {
    ($($name:ident: $t:ty),*) => {
        impl Cdr {
            $(fn $name(&mut self, v: $t) {
                self.raw(v.to_le_bytes());
            })*
        }
    };
}
cdr_numbers!(i8: i8, i16: i16, u16: u16, i32: i32, u32: u32, i64: i64, u64: u64, f32: f32, f64: f64);

impl Cdr {
    fn string(&mut self, s: &str) {
        self.string_bytes(s.as_bytes());
    }
    fn string_bytes(&mut self, s: &[u8]) {
        self.u32(s.len() as u32 + 1);
        self.buf.extend_from_slice(s);
        self.buf.push(0);
    }
    fn time(&mut self, ns: i64) {
        self.i32(ns.div_euclid(1_000_000_000) as i32);
        self.u32(ns.rem_euclid(1_000_000_000) as u32);
    }
    fn header(&mut self, stamp: i64, frame: &str) {
        self.time(stamp);
        self.string(frame);
    }
    fn f64s(&mut self, v: &[f64]) {
        self.u32(v.len() as u32);
        for &x in v {
            self.f64(x);
        }
    }
    fn f32s(&mut self, v: &[f32]) {
        self.u32(v.len() as u32);
        for &x in v {
            self.f32(x);
        }
    }
    fn fixed_f64(&mut self, v: &[f64]) {
        for &x in v {
            self.f64(x);
        }
    }
    fn strings(&mut self, v: &[String]) {
        self.u32(v.len() as u32);
        for s in v {
            self.string(s);
        }
    }
    fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.buf.extend_from_slice(v);
    }
}

fn text(s: &str) -> Datum {
    Datum::Bytes(s.as_bytes().to_vec())
}
fn bytea(b: &[u8]) -> Datum {
    Datum::Bytes(b.to_vec())
}
fn array(elem: ArrayElem, v: Vec<Datum>) -> Datum {
    Datum::Bytes(ArrayValue::of(v).encode(elem))
}
fn f64_array(v: &[f64]) -> Datum {
    array(
        ArrayElem::Float64,
        v.iter().map(|&x| Datum::Float64(x)).collect(),
    )
}
fn f32_array(v: &[f32]) -> Datum {
    array(
        ArrayElem::Float32,
        v.iter().map(|&x| Datum::Float32(x)).collect(),
    )
}
fn text_array(v: &[String]) -> Datum {
    array(ArrayElem::Text, v.iter().map(|s| text(s)).collect())
}
fn f64s(d: &[f64]) -> Vec<Datum> {
    d.iter().map(|&x| Datum::Float64(x)).collect()
}

/// One message as written and as its rows must read back: the topic
/// table's field columns, and child rows (table suffix, idx + fields).
struct Sample {
    payload: Vec<u8>,
    fields: Vec<Datum>,
    children: Vec<(&'static str, Vec<Datum>)>,
}

impl Sample {
    fn new(c: Cdr, fields: Vec<Datum>) -> Self {
        Sample {
            payload: c.buf,
            fields,
            children: Vec::new(),
        }
    }
}

struct TopicDef {
    topic: &'static str,
    schema_name: &'static str,
    schema: String,
    generate: fn(&mut Rng, usize, bool) -> Sample,
}

const FRAMES: [&str; 5] = ["", "a", "base_link", "odd", "imu_link_7"];

fn stamp(rng: &mut Rng, i: usize) -> i64 {
    1_767_600_000_000_000_000 + i as i64 * 10_000_000 + rng.below(1_000_000) as i64
}

fn joint_state(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let t = stamp(rng, i);
    let frame = FRAMES[i % FRAMES.len()];
    let names: Vec<String> = (1..=6).map(|j| format!("joint_{j}")).collect();
    let position: Vec<f64> = (0..6).map(|_| rng.f64()).collect();
    let velocity: Vec<f64> = (0..6).map(|_| rng.f64()).collect();
    let effort: Vec<f64> = if i.is_multiple_of(3) {
        vec![]
    } else {
        (0..6).map(|_| rng.f64()).collect()
    };
    let mut c = Cdr::new(be);
    c.header(t, frame);
    c.strings(&names);
    c.f64s(&position);
    c.f64s(&velocity);
    c.f64s(&effort);
    Sample::new(
        c,
        vec![
            Datum::Int64(t),
            text(frame),
            text_array(&names),
            f64_array(&position),
            f64_array(&velocity),
            f64_array(&effort),
        ],
    )
}

fn imu(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let t = stamp(rng, i);
    let frame = FRAMES[(i + 2) % FRAMES.len()];
    let q: Vec<f64> = (0..4).map(|_| rng.f64()).collect();
    let covs: Vec<Vec<f64>> = (0..3)
        .map(|_| (0..9).map(|_| rng.f64()).collect())
        .collect();
    let av: Vec<f64> = (0..3).map(|_| rng.f64()).collect();
    let la: Vec<f64> = (0..3).map(|_| rng.f64()).collect();
    let mut c = Cdr::new(be);
    c.header(t, frame);
    c.fixed_f64(&q);
    c.fixed_f64(&covs[0]);
    c.fixed_f64(&av);
    c.fixed_f64(&covs[1]);
    c.fixed_f64(&la);
    c.fixed_f64(&covs[2]);
    let mut fields = vec![Datum::Int64(t), text(frame)];
    fields.extend(f64s(&q));
    fields.push(f64_array(&covs[0]));
    fields.extend(f64s(&av));
    fields.push(f64_array(&covs[1]));
    fields.extend(f64s(&la));
    fields.push(f64_array(&covs[2]));
    Sample::new(c, fields)
}

fn odometry(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let t = stamp(rng, i);
    let child = ["base_link", "b", "base_footprint"][i % 3];
    let pose: Vec<f64> = (0..7).map(|_| rng.f64()).collect();
    let pose_cov: Vec<f64> = (0..36).map(|_| rng.f64()).collect();
    let twist: Vec<f64> = (0..6).map(|_| rng.f64()).collect();
    let twist_cov: Vec<f64> = (0..36).map(|_| rng.f64()).collect();
    let mut c = Cdr::new(be);
    c.header(t, "odom");
    c.string(child);
    c.fixed_f64(&pose);
    c.fixed_f64(&pose_cov);
    c.fixed_f64(&twist);
    c.fixed_f64(&twist_cov);
    let mut fields = vec![Datum::Int64(t), text("odom"), text(child)];
    fields.extend(f64s(&pose));
    fields.push(f64_array(&pose_cov));
    fields.extend(f64s(&twist));
    fields.push(f64_array(&twist_cov));
    Sample::new(c, fields)
}

fn laser_scan(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let t = stamp(rng, i);
    let scalars: Vec<f32> = (0..7).map(|_| rng.f32()).collect();
    let ranges: Vec<f32> = (0..30)
        .map(|k| match (k + i) % 11 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            _ => rng.f32().abs(),
        })
        .collect();
    let intensities: Vec<f32> = if i.is_multiple_of(2) {
        vec![]
    } else {
        (0..30).map(|_| rng.f32()).collect()
    };
    let mut c = Cdr::new(be);
    c.header(t, FRAMES[i % FRAMES.len()]);
    for &s in &scalars {
        c.f32(s);
    }
    c.f32s(&ranges);
    c.f32s(&intensities);
    let mut fields = vec![Datum::Int64(t), text(FRAMES[i % FRAMES.len()])];
    fields.extend(scalars.iter().map(|&x| Datum::Float32(x)));
    fields.push(f32_array(&ranges));
    fields.push(f32_array(&intensities));
    Sample::new(c, fields)
}

fn battery_state(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let t = stamp(rng, i);
    let floats: Vec<f32> = vec![
        24.0 + rng.f32() / 10.0,
        f32::NAN,
        -1.5,
        f32::NAN,
        10.0,
        12.0,
        (i % 100) as f32 / 100.0,
    ];
    let status = [0u8, 1, 2, 3, 4][i % 5];
    let cells: Vec<f32> = (0..4).map(|_| 3.7 + rng.f32() / 100.0).collect();
    let mut c = Cdr::new(be);
    c.header(t, "battery");
    for &f in &floats {
        c.f32(f);
    }
    c.u8(status);
    c.u8(1);
    c.u8(8);
    c.bool(i.is_multiple_of(2));
    c.f32s(&cells);
    c.f32s(&[]);
    c.string(&format!("slot{}", i % 3));
    c.string("SN-0042");
    let mut fields = vec![Datum::Int64(t), text("battery")];
    fields.extend(floats.iter().map(|&x| Datum::Float32(x)));
    fields.extend([
        Datum::Int16(status as i16),
        Datum::Int16(1),
        Datum::Int16(8),
        Datum::Bool(i.is_multiple_of(2)),
        f32_array(&cells),
        f32_array(&[]),
        text(&format!("slot{}", i % 3)),
        text("SN-0042"),
    ]);
    Sample::new(c, fields)
}

fn image(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let t = stamp(rng, i);
    let (h, w) = (4u32, 5u32);
    let data = rng.bytes((h * w * 3) as usize + i % 3);
    let mut c = Cdr::new(be);
    c.header(t, "camera");
    c.u32(h);
    c.u32(w);
    c.string("rgb8");
    c.u8(0);
    c.u32(w * 3);
    c.bytes(&data);
    Sample::new(
        c,
        vec![
            Datum::Int64(t),
            text("camera"),
            Datum::Int64(h as i64),
            Datum::Int64(w as i64),
            text("rgb8"),
            Datum::Int16(0),
            Datum::Int64((w * 3) as i64),
            bytea(&data),
        ],
    )
}

fn compressed_image(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let t = stamp(rng, i);
    let data = rng.bytes(10 + (i * 37) % 200);
    let mut c = Cdr::new(be);
    c.header(t, "camera_optical");
    c.string("jpeg");
    c.bytes(&data);
    Sample::new(
        c,
        vec![
            Datum::Int64(t),
            text("camera_optical"),
            text("jpeg"),
            bytea(&data),
        ],
    )
}

fn log(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let t = stamp(rng, i);
    let level = [10u8, 20, 30, 40, 50][i % 5];
    let msg = format!("héllo ✓ message {i}");
    let line = 4_000_000_000u32 - i as u32;
    let mut c = Cdr::new(be);
    c.time(t);
    c.u8(level);
    c.string("planner_node");
    c.string(&msg);
    c.string("/src/planner.cpp");
    c.string("");
    c.u32(line);
    Sample::new(
        c,
        vec![
            Datum::Int64(t),
            Datum::Int16(level as i16),
            text("planner_node"),
            text(&msg),
            text("/src/planner.cpp"),
            text(""),
            Datum::Int64(line as i64),
        ],
    )
}

fn diagnostic_array(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let t = stamp(rng, i);
    let mut c = Cdr::new(be);
    c.header(t, "");
    let statuses = i % 4;
    c.u32(statuses as u32);
    let mut children = Vec::new();
    for s in 0..statuses {
        let level = (s % 4) as u8;
        let name = format!("motor_{s}");
        let message = if s % 2 == 0 {
            "OK".to_string()
        } else {
            format!("warn {i}")
        };
        let hw = format!("hw{}", rng.below(100));
        c.u8(level);
        c.string(&name);
        c.string(&message);
        c.string(&hw);
        let values = (s + i) % 3;
        c.u32(values as u32);
        children.push((
            "status",
            vec![
                Datum::Int32(s as i32),
                Datum::Int16(level as i16),
                text(&name),
                text(&message),
                text(&hw),
            ],
        ));
        for v in 0..values {
            let key = format!("k{v}");
            let value = format!("{}", rng.below(1000));
            c.string(&key);
            c.string(&value);
            children.push((
                "status_values",
                vec![
                    Datum::Int32(s as i32),
                    Datum::Int32(v as i32),
                    text(&key),
                    text(&value),
                ],
            ));
        }
    }
    Sample {
        payload: c.buf,
        fields: vec![Datum::Int64(t), text("")],
        children,
    }
}

fn edge(rng: &mut Rng, i: usize, be: bool) -> Sample {
    let u64v = (rng.next() >> 1) | if i.is_multiple_of(2) { 0 } else { 1 << 62 };
    let times: Vec<i64> = (0..i % 3)
        .map(|k| 1_700_000_000_123_456_789 + k as i64 * 1001)
        .collect();
    let flags: Vec<bool> = (0..i % 4).map(|k| k % 2 == 1).collect();
    let small: Vec<i8> = (0..i % 5).map(|k| -(k as i8) * 30).collect();
    let words: Vec<String> = (0..i % 3).map(|k| "w".repeat(k + 1)).collect();
    let dur = -1_500_000_000i64 + i as i64;
    let mut c = Cdr::new(be);
    c.bool(true);
    c.u8(200);
    c.u8(b'z');
    c.i8(-100);
    c.u8(255);
    c.i16(-30000);
    c.u16(65000);
    c.i32(-2_000_000_000);
    c.u32(4_000_000_000);
    c.i64(-9_000_000_000_000_000_000);
    c.u64(u64v);
    c.time(dur);
    c.u32(times.len() as u32);
    for &t in &times {
        c.time(t);
    }
    c.u32(flags.len() as u32);
    for &f in &flags {
        c.bool(f);
    }
    for k in 0..3 {
        c.u16(k * 1000 + 7);
    }
    c.u32(small.len() as u32);
    for &s in &small {
        c.i8(s);
    }
    c.strings(&words);
    for k in 0..4 {
        c.u8(k * 60);
    }
    c.u8(0); // the empty struct's byte
    c.f64(i as f64 + 0.5);
    c.i64(i as i64);
    Sample::new(
        c,
        vec![
            Datum::Bool(true),
            Datum::Int16(200),
            Datum::Int16(b'z' as i16),
            Datum::Int16(-100),
            Datum::Int16(255),
            Datum::Int16(-30000),
            Datum::Int32(65000),
            Datum::Int32(-2_000_000_000),
            Datum::Int64(4_000_000_000),
            Datum::Int64(-9_000_000_000_000_000_000),
            Datum::Int64(u64v as i64),
            Datum::Int64(dur),
            array(
                ArrayElem::TimestampTz,
                times.iter().map(|&t| Datum::Int64(t)).collect(),
            ),
            array(
                ArrayElem::Bool,
                flags.iter().map(|&f| Datum::Bool(f)).collect(),
            ),
            array(
                ArrayElem::Int32,
                (0..3).map(|k| Datum::Int32(k * 1000 + 7)).collect(),
            ),
            array(
                ArrayElem::Int16,
                small.iter().map(|&s| Datum::Int16(s as i16)).collect(),
            ),
            text_array(&words),
            bytea(&[0, 60, 120, 180]),
            Datum::Float64(i as f64 + 0.5),
            Datum::Int64(i as i64),
        ],
    )
}

fn topics() -> Vec<TopicDef> {
    let header = [
        ("std_msgs/Header", msg::HEADER),
        ("builtin_interfaces/Time", msg::TIME),
    ];
    vec![
        TopicDef {
            topic: "/joint_states",
            schema_name: "sensor_msgs/msg/JointState",
            schema: ros2msg(msg::JOINT_STATE, &header),
            generate: joint_state,
        },
        TopicDef {
            topic: "/imu",
            schema_name: "sensor_msgs/msg/Imu",
            schema: ros2msg(
                msg::IMU,
                &[
                    header[0],
                    header[1],
                    ("geometry_msgs/Quaternion", msg::QUATERNION),
                    ("geometry_msgs/Vector3", msg::VECTOR3),
                ],
            ),
            generate: imu,
        },
        TopicDef {
            // `pkg/msg/Type` spelling after MSG:, Time not embedded.
            topic: "/odom",
            schema_name: "nav_msgs/msg/Odometry",
            schema: ros2msg(
                msg::ODOMETRY,
                &[
                    (
                        "geometry_msgs/msg/PoseWithCovariance",
                        msg::POSE_WITH_COVARIANCE,
                    ),
                    ("geometry_msgs/msg/Pose", msg::POSE),
                    ("geometry_msgs/msg/Point", msg::POINT),
                    ("geometry_msgs/msg/Quaternion", msg::QUATERNION),
                    (
                        "geometry_msgs/msg/TwistWithCovariance",
                        msg::TWIST_WITH_COVARIANCE,
                    ),
                    ("geometry_msgs/msg/Twist", msg::TWIST),
                    ("geometry_msgs/msg/Vector3", msg::VECTOR3),
                    ("std_msgs/msg/Header", msg::HEADER),
                ],
            ),
            generate: odometry,
        },
        TopicDef {
            topic: "/scan",
            schema_name: "sensor_msgs/msg/LaserScan",
            schema: ros2msg(msg::LASER_SCAN, &header),
            generate: laser_scan,
        },
        TopicDef {
            topic: "/battery_state",
            schema_name: "sensor_msgs/msg/BatteryState",
            schema: ros2msg(msg::BATTERY_STATE, &header),
            generate: battery_state,
        },
        TopicDef {
            topic: "/camera/image_raw",
            schema_name: "sensor_msgs/msg/Image",
            schema: ros2msg(msg::IMAGE, &header),
            generate: image,
        },
        TopicDef {
            topic: "/camera/image/compressed",
            schema_name: "sensor_msgs/msg/CompressedImage",
            schema: ros2msg(msg::COMPRESSED_IMAGE, &header),
            generate: compressed_image,
        },
        TopicDef {
            topic: "/rosout",
            schema_name: "rcl_interfaces/msg/Log",
            schema: ros2msg(msg::LOG, &[header[1]]),
            generate: log,
        },
        TopicDef {
            topic: "/diagnostics",
            schema_name: "diagnostic_msgs/msg/DiagnosticArray",
            schema: ros2msg(
                msg::DIAGNOSTIC_ARRAY,
                &[
                    ("diagnostic_msgs/DiagnosticStatus", msg::DIAGNOSTIC_STATUS),
                    ("diagnostic_msgs/KeyValue", msg::KEY_VALUE),
                    header[0],
                    header[1],
                ],
            ),
            generate: diagnostic_array,
        },
        TopicDef {
            topic: "/edge",
            schema_name: "test_msgs/msg/Edge",
            schema: ros2msg(
                EDGE,
                &[
                    ("test_msgs/Empty", EMPTY),
                    ("builtin_interfaces/Duration", DURATION),
                ],
            ),
            generate: edge,
        },
    ]
}

const RECORDING: &str = "robot01";
/// How often each topic (in `topics()` order) publishes: every n-th tick.
const EVERY: [usize; 10] = [1, 1, 2, 3, 10, 5, 4, 3, 2, 1];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Zstd,
    /// Also: no chunk CRCs, no data CRC (CRC 0 = absent).
    Lz4,
    Uncompressed,
    Unchunked,
}

#[derive(Default)]
struct Expected {
    tables: BTreeMap<String, Vec<Vec<Datum>>>,
    /// Per topic table, each row's payload.
    payloads: BTreeMap<String, Vec<Vec<u8>>>,
    messages: usize,
}

impl Expected {
    fn add(&mut self, table: &str, log_time: i64, publish_time: i64, sequence: u32, s: &Sample) {
        let mut row = vec![
            text(RECORDING),
            Datum::Int64(log_time),
            Datum::Int64(publish_time),
            Datum::Int64(sequence as i64),
        ];
        row.extend(s.fields.iter().cloned());
        self.tables.entry(table.to_string()).or_default().push(row);
        self.payloads
            .entry(table.to_string())
            .or_default()
            .push(s.payload.clone());
        for (suffix, child) in &s.children {
            let mut row = vec![
                text(RECORDING),
                Datum::Int64(log_time),
                Datum::Int64(sequence as i64),
            ];
            row.extend(child.iter().cloned());
            self.tables
                .entry(format!("{table}_{suffix}"))
                .or_default()
                .push(row);
        }
        self.messages += 1;
    }
}

fn write_options(mode: Mode) -> mcap::WriteOptions {
    let o = mcap::WriteOptions::new()
        .profile("ros2")
        .library("brewric-test")
        .chunk_size(Some(3000))
        .compression_threads(0);
    match mode {
        Mode::Zstd => o.compression(Some(mcap::Compression::Zstd)),
        Mode::Lz4 => o
            .compression(Some(mcap::Compression::Lz4))
            .calculate_chunk_crcs(false)
            .calculate_data_section_crc(false),
        Mode::Uncompressed => o.compression(None),
        Mode::Unchunked => o.use_chunks(false),
    }
}

fn qos() -> BTreeMap<String, String> {
    BTreeMap::from([(
        "offered_qos_profiles".to_string(),
        "- history: keep_last\n  depth: 0\n  reliability: reliable\n".to_string(),
    )])
}

/// Writes every topic of `topics()` for `ticks` ticks, plus a private
/// record inside a chunk and outside, an attachment and rosbag2's
/// Metadata record.
fn write_file(
    options: mcap::WriteOptions,
    ticks: usize,
    be: bool,
    seed: u64,
) -> (Vec<u8>, Expected) {
    let defs = topics();
    let mut w = options.create(Cursor::new(Vec::new())).unwrap();
    let mut channel_ids = Vec::new();
    for d in &defs {
        let schema = w
            .add_schema(d.schema_name, "ros2msg", d.schema.as_bytes())
            .unwrap();
        channel_ids.push(w.add_channel(schema, d.topic, "cdr", &qos()).unwrap());
    }
    let mut rng = Rng(seed);
    let mut expected = Expected::default();
    let mut sequences = vec![0u32; defs.len()];
    for tick in 0..ticks {
        if tick == ticks / 3 {
            w.write_private_record(
                0x80,
                b"private in chunk",
                mcap::write::PrivateRecordOptions::IncludeInChunks.into(),
            )
            .unwrap();
            w.attach(&mcap::Attachment {
                log_time: 5,
                create_time: 6,
                name: "calibration.yaml".into(),
                media_type: "application/yaml".into(),
                data: std::borrow::Cow::Owned(vec![b'x'; 100_000]),
            })
            .unwrap();
            w.write_private_record(0x81, b"private outside", Default::default())
                .unwrap();
        }
        for (k, d) in defs.iter().enumerate() {
            if tick % EVERY[k] != 0 {
                continue;
            }
            let sample = (d.generate)(&mut rng, tick / EVERY[k], be);
            // log_time steps back now and then: it need not be monotonic.
            let log_time = 1_767_600_000_000_000_000 + tick as i64 * 1_000_000 + k as i64 * 1000
                - if tick % 13 == 12 { 5_000_000 } else { 0 };
            let publish_time = log_time - 700;
            sequences[k] += 1;
            w.write_to_known_channel(
                &mcap::records::MessageHeader {
                    channel_id: channel_ids[k],
                    sequence: sequences[k],
                    log_time: log_time as u64,
                    publish_time: publish_time as u64,
                },
                &sample.payload,
            )
            .unwrap();
            let table = brewric::ingest::mcap::table_name_for_topic(d.topic);
            expected.add(&table, log_time, publish_time, sequences[k], &sample);
        }
    }
    w.write_metadata(&mcap::records::Metadata {
        name: "rosbag2".into(),
        metadata: BTreeMap::from([("ROS_DISTRO".to_string(), "jazzy".to_string())]),
    })
    .unwrap();
    w.finish().unwrap();
    (w.into_inner().into_inner(), expected)
}

/// Rows read back, per table name.
#[derive(Default, Debug)]
struct Decoded {
    tables: BTreeMap<String, Vec<Vec<Datum>>>,
    columns: BTreeMap<String, Vec<(String, DataType)>>,
    blobs: Vec<(String, usize, BlobRef)>,
    warnings: Vec<String>,
    unknown_opcodes: Vec<u8>,
    attachments: usize,
    skipped: usize,
    metadata: Vec<String>,
    repaired_strings: u64,
    encodings: BTreeMap<String, Encoding>,
}

impl Decoded {
    fn collect(&mut self, batches: Vec<TopicBatch>) {
        for mut batch in batches {
            for t in &mut batch.tables {
                t.spell_out();
            }
            if let Some(w) = &batch.plan.warning {
                if !self.warnings.contains(w) {
                    self.warnings.push(w.clone());
                }
            }
            self.repaired_strings += batch.repaired_strings;
            self.encodings
                .insert(batch.plan.table_name.clone(), batch.plan.encoding);
            let mut first_row = Vec::new();
            for t in &batch.tables {
                let layout = &batch.plan.layout.tables[t.table];
                assert_eq!(t.columns.len(), layout.columns.len());
                self.columns.insert(
                    layout.name.clone(),
                    layout
                        .columns
                        .iter()
                        .map(|c| (c.name.clone(), c.data_type))
                        .collect(),
                );
                for (c, l) in t.columns.iter().zip(&layout.columns) {
                    assert_eq!(c.len(), t.rows, "{}.{}", layout.name, l.name);
                    assert_eq!(c.data_type, l.data_type, "{}.{}", layout.name, l.name);
                }
                let rows = self.tables.entry(layout.name.clone()).or_default();
                first_row.push(rows.len());
                for r in 0..t.rows {
                    rows.push(t.columns.iter().map(|c: &Column| c.datum(r)).collect());
                }
            }
            for b in batch.blobs {
                let name = batch.plan.layout.tables[b.table].name.clone();
                self.blobs.push((name, first_row[b.table] + b.row, b));
            }
        }
    }

    fn note(&mut self, record: &Record<'_>) {
        match record {
            Record::Unknown { opcode, .. } => self.unknown_opcodes.push(*opcode),
            Record::Attachment(_) => self.attachments += 1,
            Record::Skipped { .. } => self.skipped += 1,
            Record::Metadata(m) => self.metadata.push(m.name.to_string()),
            _ => {}
        }
    }
}

/// The sans-io path: the file fed in pieces whose sizes `piece` draws.
fn decode_stream(
    file: &[u8],
    mut piece: impl FnMut() -> usize,
    options: DecodeOptions,
    reader: ReaderOptions,
) -> Result<(Decoded, Ending), McapError> {
    let mut stream = McapStream::new(reader);
    let mut decoder = Decoder::new(Channels::new(options));
    let mut out = Decoded::default();
    let mut pos = 0;
    let mut max_buffered = 0;
    loop {
        while let Some(rec) = stream.next_record()? {
            out.note(&rec.record);
            decoder.record(&rec)?;
        }
        max_buffered = max_buffered.max(stream.buffered());
        if pos == file.len() {
            break;
        }
        let n = piece().clamp(1, file.len() - pos);
        stream.feed(&file[pos..pos + n]);
        pos += n;
        out.collect(decoder.take_batches_over(40, usize::MAX));
    }
    out.collect(decoder.take_batches());
    // Memory stays near one record plus one piece, not the file.
    assert!(max_buffered < 600_000, "buffered {max_buffered}");
    Ok((out, stream.finish()))
}

fn random_pieces(seed: u64) -> impl FnMut() -> usize {
    let mut rng = Rng(seed);
    move || match rng.below(4) {
        0 => 1,
        1 => 1 + rng.below(16) as usize,
        2 => 1 + rng.below(4096) as usize,
        _ => 1 + rng.below(70_000) as usize,
    }
}

/// The summary path, one chunk at a time, a fresh decoder per chunk (as a
/// worker would have). `None` when the file has to be read linearly.
fn decode_indexed(file: &[u8], options: DecodeOptions) -> Result<Option<Decoded>, McapError> {
    let reader = ReaderOptions::default();
    let Some(indexed) = IndexedFile::open(file, &reader)? else {
        return Ok(None);
    };
    indexed.verify_data_crc()?;
    let channels = Channels::from_indexed(&indexed, options)?;
    let mut out = Decoded::default();
    let mut buffer = brewric::ingest::mcap::ChunkBuffer::new();
    for chunk in &indexed.chunks {
        let mut decoder = Decoder::new(channels.clone());
        for rec in indexed.chunk_records(chunk, &mut buffer)? {
            let rec = rec?;
            out.note(&rec.record);
            decoder.record(&rec)?;
        }
        out.collect(decoder.take_batches());
    }
    for m in &indexed.metadata {
        out.metadata.push(m.name.to_string());
    }
    Ok(Some(out))
}

/// The summary path with chunks spread over threads, batches gathered back
/// in chunk order.
fn decode_parallel(file: &[u8], options: DecodeOptions, threads: usize) -> Decoded {
    let indexed = IndexedFile::open(file, &ReaderOptions::default())
        .unwrap()
        .unwrap();
    let channels = Channels::from_indexed(&indexed, options).unwrap();
    let mut per_chunk: Vec<Vec<TopicBatch>> = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|w| {
                let indexed = &indexed;
                let channels = channels.clone();
                s.spawn(move || {
                    let mut buffer = brewric::ingest::mcap::ChunkBuffer::new();
                    let mut mine = Vec::new();
                    for (i, chunk) in indexed
                        .chunks
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % threads == w)
                    {
                        let mut decoder = Decoder::new(channels.clone());
                        for rec in indexed.chunk_records(chunk, &mut buffer).unwrap() {
                            decoder.record(&rec.unwrap()).unwrap();
                        }
                        mine.push((i, decoder.take_batches()));
                    }
                    mine
                })
            })
            .collect();
        let mut all: Vec<(usize, Vec<TopicBatch>)> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_by_key(|(i, _)| *i);
        per_chunk = all.into_iter().map(|(_, b)| b).collect();
    });
    let mut out = Decoded::default();
    for b in per_chunk {
        out.collect(b);
    }
    out
}

/// Datum equality with floats compared by bits (NaN, -0.0).
fn same(a: &Datum, b: &Datum) -> bool {
    match (a, b) {
        (Datum::Float32(x), Datum::Float32(y)) => x.to_bits() == y.to_bits(),
        (Datum::Float64(x), Datum::Float64(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

fn assert_rows(expected: &BTreeMap<String, Vec<Vec<Datum>>>, got: &Decoded, context: &str) {
    let want: Vec<&String> = expected.keys().collect();
    let have: Vec<&String> = got
        .tables
        .keys()
        .filter(|k| !got.tables[*k].is_empty())
        .collect();
    assert_eq!(want, have, "{context}: tables");
    for (table, rows) in expected {
        let decoded = &got.tables[table];
        assert_eq!(rows.len(), decoded.len(), "{context}: rows of {table}");
        for (r, (w, g)) in rows.iter().zip(decoded).enumerate() {
            assert_eq!(w.len(), g.len(), "{context}: columns of {table}");
            for (c, (x, y)) in w.iter().zip(g).enumerate() {
                assert!(
                    same(x, y),
                    "{context}: {table} row {r} column {} ({}): want {x:?}, got {y:?}",
                    c,
                    got.columns[table][c].0
                );
            }
        }
    }
}

fn options() -> DecodeOptions {
    DecodeOptions {
        recording: RECORDING.to_string(),
        blob_threshold: None,
    }
}

#[test]
fn every_message_type_reads_back_in_every_container_mode() {
    for (m, mode) in [Mode::Zstd, Mode::Lz4, Mode::Uncompressed, Mode::Unchunked]
        .into_iter()
        .enumerate()
    {
        let (file, expected) = write_file(write_options(mode), 60, false, 7 + m as u64);
        let context = format!("{mode:?} stream");
        let (got, ending) = decode_stream(
            &file,
            random_pieces(m as u64),
            options(),
            ReaderOptions::default(),
        )
        .unwrap();
        assert_eq!(ending, Ending::Complete, "{context}");
        assert_rows(&expected.tables, &got, &context);
        assert_eq!(got.unknown_opcodes, [0x80, 0x81], "{context}");
        assert_eq!(got.attachments, 1, "{context}");
        assert_eq!(got.metadata, ["rosbag2"], "{context}");
        assert!(got.warnings.is_empty(), "{context}: {:?}", got.warnings);

        match decode_indexed(&file, options()).unwrap() {
            Some(got) => {
                assert_ne!(mode, Mode::Unchunked, "loose messages need the linear read");
                assert_rows(&expected.tables, &got, &format!("{mode:?} summary"));
                assert_eq!(got.unknown_opcodes, [0x80], "only the one inside a chunk");
                assert_eq!(got.metadata, ["rosbag2"]);
                let par = decode_parallel(&file, options(), 3);
                assert_rows(&expected.tables, &par, &format!("{mode:?} parallel"));
            }
            None => assert_eq!(mode, Mode::Unchunked),
        }

        // The mcap crate sees the same messages.
        let count = mcap::MessageStream::new(&file).unwrap().count();
        assert_eq!(count, expected.messages);
    }
}

#[test]
fn byte_by_byte_and_whole_file_feeds_agree() {
    let (file, expected) = write_file(write_options(Mode::Zstd), 25, false, 99);
    let (one, _) = decode_stream(&file, || 1, options(), ReaderOptions::default()).unwrap();
    assert_rows(&expected.tables, &one, "1-byte pieces");
    let len = file.len();
    let (whole, ending) =
        decode_stream(&file, move || len, options(), ReaderOptions::default()).unwrap();
    assert_eq!(ending, Ending::Complete);
    assert_rows(&expected.tables, &whole, "whole file");
}

#[test]
fn the_tables_are_named_and_typed_as_issue_8_says() {
    let (file, _) = write_file(write_options(Mode::Zstd), 12, false, 1);
    let got = decode_indexed(&file, options()).unwrap().unwrap();
    let tables: Vec<&str> = got.columns.keys().map(|s| s.as_str()).collect();
    assert_eq!(
        tables,
        [
            "battery_state",
            "camera_image_compressed",
            "camera_image_raw",
            "diagnostics",
            "diagnostics_status",
            "diagnostics_status_values",
            "edge",
            "imu",
            "joint_states",
            "odom",
            "rosout",
            "scan",
        ]
    );
    let col = |table: &str, name: &str| {
        got.columns[table]
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
            .unwrap_or_else(|| panic!("{table}.{name} in {:?}", got.columns[table]))
    };
    for table in ["imu", "odom", "joint_states"] {
        let lead: Vec<(String, DataType)> = got.columns[table][..5].to_vec();
        assert_eq!(
            lead,
            [
                ("recording".to_string(), DataType::Text),
                ("log_time".to_string(), DataType::TimestampTz),
                ("publish_time".to_string(), DataType::TimestampTz),
                ("sequence".to_string(), DataType::Int64),
                ("header_stamp".to_string(), DataType::TimestampTz),
            ]
        );
    }
    assert_eq!(col("odom", "pose_pose_position_x"), DataType::Float64);
    assert_eq!(
        col("odom", "pose_covariance"),
        DataType::Array(ArrayElem::Float64)
    );
    assert_eq!(col("odom", "twist_twist_angular_z"), DataType::Float64);
    assert_eq!(
        col("joint_states", "position"),
        DataType::Array(ArrayElem::Float64)
    );
    assert_eq!(
        col("joint_states", "name"),
        DataType::Array(ArrayElem::Text)
    );
    assert_eq!(col("scan", "ranges"), DataType::Array(ArrayElem::Float32));
    assert_eq!(col("battery_state", "percentage"), DataType::Float32);
    assert_eq!(col("battery_state", "power_supply_status"), DataType::Int16);
    assert_eq!(col("battery_state", "present"), DataType::Bool);
    assert_eq!(col("camera_image_raw", "data"), DataType::Bytea);
    assert_eq!(col("camera_image_raw", "height"), DataType::Int64);
    assert_eq!(col("rosout", "stamp"), DataType::TimestampTz);
    assert_eq!(col("rosout", "line"), DataType::Int64);
    assert_eq!(col("diagnostics_status", "status_idx"), DataType::Int32);
    assert_eq!(col("diagnostics_status", "level"), DataType::Int16);
    assert_eq!(
        col("diagnostics_status_values", "values_idx"),
        DataType::Int32
    );
    assert_eq!(col("edge", "dur"), DataType::Int64);
    assert_eq!(col("edge", "sequence_2"), DataType::Int64);
    assert_eq!(col("edge", "quad"), DataType::Bytea);
    let status: Vec<&str> = got.columns["diagnostics_status_values"]
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(
        status,
        [
            "recording",
            "log_time",
            "sequence",
            "status_idx",
            "values_idx",
            "key",
            "value"
        ]
    );
}

#[test]
fn big_endian_payloads_decode_to_the_same_values() {
    let (file, expected) = write_file(write_options(Mode::Zstd), 30, true, 5);
    let got = decode_indexed(&file, options()).unwrap().unwrap();
    assert_rows(&expected.tables, &got, "big-endian");
}

#[test]
fn large_byte_sequences_become_references() {
    let blob_options = DecodeOptions {
        recording: RECORDING.to_string(),
        blob_threshold: Some(100),
    };
    for mode in [Mode::Uncompressed, Mode::Zstd, Mode::Unchunked] {
        let (file, mut expected) = write_file(write_options(mode), 40, false, 3);
        let (got, _) = decode_stream(
            &file,
            random_pieces(8),
            blob_options.clone(),
            ReaderOptions::default(),
        )
        .unwrap();
        assert!(!got.blobs.is_empty());
        for (table, row, blob) in &got.blobs {
            let payload = &expected.payloads[table][*row];
            assert!(blob.len > 100);
            let data_column = got.columns[table]
                .iter()
                .position(|(n, _)| n == "data")
                .unwrap();
            assert_eq!(blob.column, data_column);
            assert_eq!(
                expected.tables[table][*row][data_column],
                bytea(&payload[blob.offset..blob.offset + blob.len]),
                "the reference covers the data"
            );
            match (mode, blob.file_offset) {
                (Mode::Zstd, None) => {}
                (Mode::Uncompressed | Mode::Unchunked, Some(at)) => {
                    assert_eq!(
                        &file[at as usize..at as usize + blob.len],
                        &payload[blob.offset..blob.offset + blob.len]
                    );
                }
                other => panic!("{other:?}"),
            }
            // The column holds an empty value in its place.
            expected.tables.get_mut(table).unwrap()[*row][data_column] = bytea(&[]);
        }
        assert_rows(&expected.tables, &got, &format!("{mode:?} with blobs"));
    }
}

/// Offsets of the top-level records of a file.
fn top_level_offsets(file: &[u8]) -> Vec<(u64, u8)> {
    let mut reader = brewric::ingest::mcap::LinearReader::new(ReaderOptions::default());
    reader.feed(file);
    let mut out = Vec::new();
    while let Some(rec) = reader.next_record().unwrap() {
        let opcode = match rec.record {
            Record::Chunk(_) => 0x06,
            Record::DataEnd(_) => 0x0F,
            Record::Footer(_) => 0x02,
            _ => 0,
        };
        let Location::File(o) = rec.at else { panic!() };
        out.push((o, opcode));
    }
    out
}

/// Every decoded table is a prefix of what was written.
fn assert_prefix(expected: &BTreeMap<String, Vec<Vec<Datum>>>, got: &Decoded, context: &str) {
    for (table, rows) in &got.tables {
        let want = &expected[table];
        assert!(rows.len() <= want.len(), "{context}: {table}");
        for (w, g) in want.iter().zip(rows) {
            assert!(
                w.iter().zip(g).all(|(x, y)| same(x, y)),
                "{context}: {table}"
            );
        }
    }
}

#[test]
fn truncated_files_report_where_they_stop() {
    let (file, expected) = write_file(write_options(Mode::Zstd), 40, false, 11);
    let records = top_level_offsets(&file);
    let data_end = records.iter().find(|(_, op)| *op == 0x0F).unwrap().0 as usize;
    let second_chunk = records
        .iter()
        .filter(|(_, op)| *op == 0x06)
        .nth(1)
        .unwrap()
        .0 as usize;
    let cases = [
        (4, true, "opening magic"),
        (data_end, false, "complete record"),
        (second_chunk + 40, true, "Chunk record"),
        (second_chunk + 5, true, "record header"),
        (file.len() - 3, true, "end magic"),
        (file.len() - 20, true, "Footer record"),
    ];
    for (cut, partial, words) in cases {
        let (got, ending) = decode_stream(
            &file[..cut],
            random_pieces(cut as u64),
            options(),
            ReaderOptions::default(),
        )
        .unwrap();
        let Ending::Truncated {
            offset,
            partial_record,
            detail,
        } = ending.clone()
        else {
            panic!("cut at {cut}: {ending:?}");
        };
        assert_eq!(partial_record, partial, "cut at {cut}: {detail}");
        assert!(detail.contains(words), "cut at {cut}: {detail}");
        assert!(offset as usize <= cut);
        assert_prefix(&expected.tables, &got, &format!("cut at {cut}"));
        let e = ending.into_result().unwrap_err();
        assert!(matches!(e, McapError::Truncated { .. }));
        assert!(e.to_string().contains(&format!("offset {offset}")), "{e}");
        // Without the end magic there is no summary to go by.
        if cut > 8 {
            assert!(IndexedFile::open(&file[..cut], &ReaderOptions::default())
                .unwrap()
                .is_none());
        }
    }
    // Cut after a complete record, the data read so far is whole.
    let (got, _) = decode_stream(
        &file[..data_end],
        || 4096,
        options(),
        ReaderOptions::default(),
    )
    .unwrap();
    assert_rows(&expected.tables, &got, "everything before DataEnd");
    // Not MCAP at all.
    let e = decode_stream(
        b"PK\x03\x04 not an mcap file",
        || 7,
        options(),
        ReaderOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, McapError::NotMcap { offset: 0 }), "{e}");
    assert!(IndexedFile::open(b"\x89MCAP1\r\n", &ReaderOptions::default()).is_err());
}

#[test]
fn a_bad_chunk_crc_names_the_chunk() {
    let (mut file, _) = write_file(write_options(Mode::Uncompressed), 40, false, 12);
    let indexed = IndexedFile::open(&file, &ReaderOptions::default())
        .unwrap()
        .unwrap();
    let chunk = indexed.chunks[1].clone();
    let at = (chunk.offset + chunk.length - 5) as usize;
    file[at] ^= 0x40;
    let e =
        decode_stream(&file, random_pieces(1), options(), ReaderOptions::default()).unwrap_err();
    assert!(
        matches!(e, McapError::Crc { what: "chunk", at: Location::File(o), .. } if o == chunk.offset),
        "{e}"
    );
    assert!(
        e.to_string().contains(&format!("offset {}", chunk.offset)),
        "{e}"
    );
    let indexed = IndexedFile::open(&file, &ReaderOptions::default())
        .unwrap()
        .unwrap();
    let mut buffer = brewric::ingest::mcap::ChunkBuffer::new();
    let e = indexed.chunk_records(&chunk, &mut buffer).unwrap_err();
    assert!(matches!(e, McapError::Crc { what: "chunk", .. }), "{e}");
    // The data section CRC catches it too.
    assert!(matches!(
        indexed.verify_data_crc(),
        Err(McapError::Crc {
            what: "data section",
            ..
        })
    ));
}

#[test]
fn data_and_summary_crcs_are_checked() {
    let (file, _) = write_file(write_options(Mode::Zstd), 10, false, 13);
    // The Header record's profile "ros2" (offset 8 + 9 + 4) → "ros3".
    let mut bad = file.clone();
    assert_eq!(&bad[21..25], b"ros2");
    bad[24] = b'3';
    let e = decode_stream(&bad, || 1000, options(), ReaderOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            McapError::Crc {
                what: "data section",
                ..
            }
        ),
        "{e}"
    );
    let indexed = IndexedFile::open(&bad, &ReaderOptions::default())
        .unwrap()
        .unwrap();
    assert!(indexed.verify_data_crc().is_err());
    let lenient = ReaderOptions {
        verify_crcs: false,
        ..ReaderOptions::default()
    };
    assert!(decode_stream(&bad, || 1000, options(), lenient.clone()).is_ok());

    // A schema name in the summary.
    let indexed = IndexedFile::open(&file, &ReaderOptions::default())
        .unwrap()
        .unwrap();
    let start = indexed.footer.summary_start as usize;
    let at = start
        + file[start..]
            .windows(7)
            .position(|w| w == b"sensor_")
            .unwrap();
    let mut bad = file.clone();
    bad[at] = b'S';
    let e = IndexedFile::open(&bad, &ReaderOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            McapError::Crc {
                what: "summary section",
                ..
            }
        ),
        "{e}"
    );
    assert!(IndexedFile::open(&bad, &lenient).unwrap().is_some());
}

#[test]
fn corrupt_zstd_fails_to_decompress() {
    let (file, _) = write_file(write_options(Mode::Zstd), 30, false, 14);
    let indexed = IndexedFile::open(&file, &ReaderOptions::default())
        .unwrap()
        .unwrap();
    let chunk = indexed.chunks[0].clone();
    let record = indexed.chunk(&chunk).unwrap();
    let records_at = record.records_file_offset as usize;
    // The zstd frame magic.
    let mut bad = file.clone();
    bad[records_at] ^= 0xFF;
    let e = decode_stream(&bad, || 10_000, options(), ReaderOptions::default()).unwrap_err();
    assert!(
        matches!(&e, McapError::Decompress { at: Location::File(o), compression, .. } if *o == chunk.offset && compression == "zstd"),
        "{e}"
    );
    // Garbage in the middle: it fails to decompress or to match its CRC.
    let mut bad = file.clone();
    let mid = records_at + record.records.len() / 2;
    for b in &mut bad[mid..mid + 32] {
        *b = 0xA5;
    }
    let indexed = IndexedFile::open(&bad, &ReaderOptions::default())
        .unwrap()
        .unwrap();
    let mut buffer = brewric::ingest::mcap::ChunkBuffer::new();
    let e = indexed.chunk_records(&chunk, &mut buffer).unwrap_err();
    assert!(
        matches!(e, McapError::Decompress { .. } | McapError::Crc { .. }),
        "{e}"
    );

    // lz4 likewise (no CRC in that mode: the frame itself must fail).
    let (file, _) = write_file(write_options(Mode::Lz4), 30, false, 14);
    let indexed = IndexedFile::open(&file, &ReaderOptions::default())
        .unwrap()
        .unwrap();
    let record = indexed.chunk(&indexed.chunks[0]).unwrap();
    let mut bad = file.clone();
    bad[record.records_file_offset as usize] ^= 0xFF;
    let e = decode_stream(&bad, || 10_000, options(), ReaderOptions::default()).unwrap_err();
    assert!(
        matches!(&e, McapError::Decompress { compression, .. } if compression == "lz4"),
        "{e}"
    );
}

/// A small file with the given (schema name, encoding, text) and channel
/// (topic, message encoding) and payloads.
fn custom_file(
    options: mcap::WriteOptions,
    schema: Option<(&str, &str, &[u8])>,
    topic: &str,
    message_encoding: &str,
    payloads: &[Vec<u8>],
) -> Vec<u8> {
    let mut w = options.create(Cursor::new(Vec::new())).unwrap();
    let schema_id = match schema {
        Some((name, encoding, data)) => w.add_schema(name, encoding, data).unwrap(),
        None => 0,
    };
    let channel = w
        .add_channel(schema_id, topic, message_encoding, &BTreeMap::new())
        .unwrap();
    for (i, p) in payloads.iter().enumerate() {
        w.write_to_known_channel(
            &mcap::records::MessageHeader {
                channel_id: channel,
                sequence: i as u32,
                log_time: 1_000 + i as u64,
                publish_time: 1_000 + i as u64,
            },
            p,
        )
        .unwrap();
    }
    w.finish().unwrap();
    w.into_inner().into_inner()
}

#[test]
fn a_schema_that_does_not_parse_names_channel_topic_and_line() {
    let text = "std_msgs/Header header\nfloat64 ok\ngeometry_msgs/Nope bad\n================================================================================\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
    let file = custom_file(
        write_options(Mode::Zstd),
        Some(("test_msgs/msg/Bad", "ros2msg", text.as_bytes())),
        "/bad",
        "cdr",
        &[vec![0, 1, 0, 0]],
    );
    let e = decode_stream(&file, || 100, options(), ReaderOptions::default()).unwrap_err();
    let McapError::Channel { topic, source, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(topic, "/bad");
    assert!(
        matches!(&**source, McapError::Schema { line: 3, .. }),
        "{e}"
    );
    let message = e.to_string();
    assert!(
        message.contains("geometry_msgs/Nope") && message.contains("line 3"),
        "{message}"
    );
    let indexed = IndexedFile::open(&file, &ReaderOptions::default())
        .unwrap()
        .unwrap();
    assert!(Channels::from_indexed(&indexed, options()).is_err());
    // The DbError a client sees.
    let db: brewric::error::DbError = e.into();
    assert_eq!(db.code, "22P04");
}

fn imu_channels() -> (Channels, String) {
    let defs = topics();
    let mut channels = Channels::new(options());
    let schema_text = defs[1].schema.clone();
    channels
        .add_schema(
            &brewric::ingest::mcap::SchemaRecord {
                id: 1,
                name: "sensor_msgs/msg/Imu",
                encoding: "ros2msg",
                data: schema_text.as_bytes(),
            },
            Location::File(0),
        )
        .unwrap();
    let diag = defs[8].schema.clone();
    channels
        .add_schema(
            &brewric::ingest::mcap::SchemaRecord {
                id: 2,
                name: "diagnostic_msgs/msg/DiagnosticArray",
                encoding: "ros2msg",
                data: diag.as_bytes(),
            },
            Location::File(0),
        )
        .unwrap();
    for (id, schema_id, topic) in [(1, 1, "/imu"), (2, 1, "/imu_rear"), (3, 2, "/diagnostics")] {
        channels
            .add_channel(
                &brewric::ingest::mcap::ChannelRecord {
                    id,
                    schema_id,
                    topic,
                    message_encoding: "cdr",
                    metadata: vec![],
                },
                Location::File(0),
            )
            .unwrap();
    }
    (channels, schema_text)
}

fn message(
    channel_id: u16,
    sequence: u32,
    data: &[u8],
) -> brewric::ingest::mcap::MessageRecord<'_> {
    brewric::ingest::mcap::MessageRecord {
        channel_id,
        sequence,
        log_time: 10 + sequence as u64,
        publish_time: 10,
        data,
        data_file_offset: None,
    }
}

#[test]
fn a_short_message_is_an_error_and_leaves_no_rows() {
    let (channels, _) = imu_channels();
    // Same type on two topics: one compiled plan, two tables.
    assert_eq!(channels.channel(1).unwrap().layout.main().name, "imu");
    assert_eq!(channels.channel(2).unwrap().layout.main().name, "imu_rear");
    let mut decoder = Decoder::new(channels);
    let mut rng = Rng(4);
    let good = imu(&mut rng, 0, false);
    let at = Location::InChunk {
        chunk: 1234,
        offset: 56,
    };
    decoder.message(&message(1, 1, &good.payload), at).unwrap();
    let e = decoder
        .message(&message(1, 2, &good.payload[..200]), at)
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("offset 56 inside the chunk at offset 1234")
            && text.contains("channel 1")
            && text.contains("/imu")
            && text.contains("field angular_velocity_covariance")
            && text.contains("byte 156")
            && text.contains("(200 bytes)"),
        "{text}"
    );
    assert_eq!(e.sqlstate(), "22P03");
    decoder.message(&message(1, 3, &good.payload), at).unwrap();
    for cut in [0, 3, 4, 5, 17, 100, 323] {
        assert!(
            decoder
                .message(&message(1, 9, &good.payload[..cut]), at)
                .is_err(),
            "cut {cut}"
        );
    }

    // Child tables roll back too: a DiagnosticArray cut inside its second
    // status's values.
    let full = diagnostic_array(&mut rng, 3, false);
    assert_eq!(full.children.iter().filter(|c| c.0 == "status").count(), 3);
    decoder.message(&message(3, 1, &full.payload), at).unwrap();
    let e = decoder
        .message(&message(3, 2, &full.payload[..full.payload.len() - 3]), at)
        .unwrap_err();
    assert!(e.to_string().contains("status.values.value"), "{e}");
    decoder.message(&message(3, 3, &full.payload), at).unwrap();

    let mut got = Decoded::default();
    got.collect(decoder.take_batches());
    assert_eq!(got.tables["imu"].len(), 2);
    assert_eq!(
        got.tables["imu"][1][3],
        Datum::Int64(3),
        "the good rows, in order"
    );
    assert_eq!(got.tables["diagnostics"].len(), 2);
    let status = full.children.iter().filter(|c| c.0 == "status").count();
    let values = full.children.len() - status;
    assert_eq!(got.tables["diagnostics_status"].len(), 2 * status);
    assert_eq!(got.tables["diagnostics_status_values"].len(), 2 * values);
    assert!(got.tables["diagnostics_status"]
        .iter()
        .all(|r| r[2] != Datum::Int64(2)));
}

#[test]
fn trailing_padding_is_ignored_and_empty_struct_sequences_work() {
    let (channels, _) = imu_channels();
    let mut decoder = Decoder::new(channels);
    let mut rng = Rng(5);
    let mut padded = imu(&mut rng, 0, false);
    padded.payload.extend_from_slice(&[0, 0, 0]);
    decoder
        .message(&message(1, 1, &padded.payload), Location::File(0))
        .unwrap();
    let none = diagnostic_array(&mut rng, 0, false);
    assert!(none.children.is_empty());
    decoder
        .message(&message(3, 1, &none.payload), Location::File(0))
        .unwrap();
    let mut got = Decoded::default();
    got.collect(decoder.take_batches());
    assert_eq!(got.tables["imu"][0][4..], padded.fields[..]);
    assert!(got
        .tables
        .get("diagnostics_status")
        .is_none_or(|t| t.is_empty()));
}

#[test]
fn uint64_above_bigint_names_the_field() {
    let defs = topics();
    let edge_def = &defs[9];
    let mut rng = Rng(6);
    let mut sample = edge(&mut rng, 0, false);
    // u64 follows: bool, 4 bytes, i16 @6, u16 @8, i32 @12, u32 @16, i64 @24, u64 @32.
    sample.payload[4 + 32..4 + 40].copy_from_slice(&(1u64 << 63).to_le_bytes());
    let file = custom_file(
        write_options(Mode::Zstd),
        Some((edge_def.schema_name, "ros2msg", edge_def.schema.as_bytes())),
        "/edge",
        "cdr",
        &[sample.payload],
    );
    let e = decode_stream(&file, || 333, options(), ReaderOptions::default()).unwrap_err();
    let McapError::Channel { source, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(
        **source,
        McapError::Overflow {
            field: "u64".to_string(),
            value: 1 << 63
        }
    );
    assert_eq!(e.sqlstate(), "22003");
}

#[test]
fn parameter_list_cdr_is_refused_by_name() {
    let (channels, _) = imu_channels();
    let mut decoder = Decoder::new(channels);
    let mut rng = Rng(7);
    let mut s = imu(&mut rng, 0, false);
    s.payload[1] = 3;
    let e = decoder
        .message(&message(1, 1, &s.payload), Location::File(99))
        .unwrap_err();
    assert!(e.to_string().contains("PL_CDR_LE"), "{e}");
    assert!(decoder.take_batches().is_empty());
}

#[test]
fn unknown_encodings_are_stored_raw_with_a_warning() {
    let payloads = vec![b"\x08\x96\x01".to_vec(), vec![], b"raw bytes".to_vec()];
    for (schema, encoding) in [
        (
            Some(("pkg.Msg", "protobuf", &b"\x0a\x03foo"[..])),
            "protobuf",
        ),
        (None, "cdr"),
        (
            Some((
                "pkg/msg/T",
                "ros2idl",
                &b"module pkg { struct T { long x; }; };"[..],
            )),
            "cdr",
        ),
    ] {
        let file = custom_file(
            write_options(Mode::Zstd),
            schema,
            "/odd/topic",
            encoding,
            &payloads,
        );
        let (got, ending) =
            decode_stream(&file, || 50, options(), ReaderOptions::default()).unwrap();
        assert_eq!(ending, Ending::Complete);
        assert_eq!(
            got.columns["odd_topic"],
            [
                ("recording".to_string(), DataType::Text),
                ("log_time".to_string(), DataType::TimestampTz),
                ("publish_time".to_string(), DataType::TimestampTz),
                ("sequence".to_string(), DataType::Int64),
                ("data".to_string(), DataType::Bytea),
            ]
        );
        let data: Vec<Datum> = got.tables["odd_topic"]
            .iter()
            .map(|r| r[4].clone())
            .collect();
        assert_eq!(data, payloads.iter().map(|p| bytea(p)).collect::<Vec<_>>());
        assert_eq!(got.encodings["odd_topic"], Encoding::Raw);
        assert_eq!(got.warnings.len(), 1, "{:?}", got.warnings);
        assert!(got.warnings[0].contains("/odd/topic"), "{:?}", got.warnings);
    }
}

#[test]
fn json_channels_get_columns_from_their_schema() {
    let schema = br#"{"type":"object","properties":{"speed":{"type":"number"},"gear":{"type":"integer"},
        "mode":{"type":"string"},"pos":{"type":"object","properties":{"x":{"type":"number"}}},"extra":{}}}"#;
    let payloads = vec![
        br#"{"speed":1.5,"gear":2,"mode":"auto","pos":{"x":3},"extra":[1,{"b":2}]}"#.to_vec(),
        br#"{"speed":2}"#.to_vec(),
    ];
    let file = custom_file(
        write_options(Mode::Lz4),
        Some(("Telemetry", "jsonschema", &schema[..])),
        "/telemetry",
        "json",
        &payloads,
    );
    let (got, _) = decode_stream(&file, || 64, options(), ReaderOptions::default()).unwrap();
    let names: Vec<(String, DataType)> = got.columns["telemetry"][4..].to_vec();
    assert_eq!(
        names,
        [
            ("extra".to_string(), DataType::Jsonb),
            ("gear".to_string(), DataType::Int64),
            ("mode".to_string(), DataType::Text),
            ("pos_x".to_string(), DataType::Float64),
            ("speed".to_string(), DataType::Float64),
        ]
    );
    let rows = &got.tables["telemetry"];
    assert_eq!(rows[0][4], text(r#"[1, {"b": 2}]"#));
    assert_eq!(rows[0][5], Datum::Int64(2));
    assert_eq!(rows[0][7], Datum::Float64(3.0));
    assert_eq!(rows[1][5], Datum::Null);
    assert_eq!(rows[1][8], Datum::Float64(2.0));

    // Without a schema: the whole document.
    let file = custom_file(write_options(Mode::Zstd), None, "/j", "json", &payloads);
    let (got, _) = decode_stream(&file, || 64, options(), ReaderOptions::default()).unwrap();
    assert_eq!(got.columns["j"][4], ("data".to_string(), DataType::Jsonb));
    assert_eq!(got.tables["j"][1][4], text(r#"{"speed": 2}"#));
    assert_eq!(got.encodings["j"], Encoding::JsonDocument);
    assert!(got.warnings.is_empty());
}

#[test]
fn files_without_summary_indexes_or_repeated_channels_read_linearly() {
    let bare = write_options(Mode::Zstd)
        .emit_statistics(false)
        .emit_summary_offsets(false)
        .emit_message_indexes(false)
        .emit_chunk_indexes(false)
        .emit_attachment_indexes(false)
        .emit_metadata_indexes(false)
        .repeat_channels(false)
        .repeat_schemas(false);
    let (file, expected) = write_file(bare, 30, false, 21);
    assert!(IndexedFile::open(&file, &ReaderOptions::default())
        .unwrap()
        .is_none());
    let (got, ending) =
        decode_stream(&file, random_pieces(2), options(), ReaderOptions::default()).unwrap();
    assert_eq!(ending, Ending::Complete);
    assert_rows(&expected.tables, &got, "no summary");

    // Statistics but no repeated channels (or schemas): a worker could not
    // know them.
    for options in [
        write_options(Mode::Zstd).repeat_channels(false),
        write_options(Mode::Zstd).repeat_schemas(false),
    ] {
        let (file, expected) = write_file(options, 30, false, 21);
        assert!(IndexedFile::open(&file, &ReaderOptions::default())
            .unwrap()
            .is_none());
        let (got, _) =
            decode_stream(&file, || 10_000, self::options(), ReaderOptions::default()).unwrap();
        assert_rows(&expected.tables, &got, "channels or schemas only in chunks");
    }

    // No message indexes, no chunk indexes: the summary path lists chunks
    // from the data section itself.
    let (file, expected) = write_file(
        write_options(Mode::Uncompressed)
            .emit_message_indexes(false)
            .emit_chunk_indexes(false),
        30,
        false,
        22,
    );
    let got = decode_indexed(&file, options()).unwrap().unwrap();
    assert_rows(&expected.tables, &got, "no indexes");
}

#[test]
fn oversized_records_are_skipped_or_refused() {
    let (file, expected) = write_file(write_options(Mode::Zstd), 30, false, 31);
    let small = ReaderOptions {
        max_record_bytes: 50_000,
        ..ReaderOptions::default()
    };
    let (got, _) = decode_stream(&file, random_pieces(3), options(), small).unwrap();
    assert_eq!(
        (got.attachments, got.skipped),
        (0, 1),
        "the 100 kB attachment streams by"
    );
    assert_rows(&expected.tables, &got, "skipping");
    let tiny = ReaderOptions {
        max_record_bytes: 100,
        ..ReaderOptions::default()
    };
    let e = decode_stream(&file, || 4096, options(), tiny).unwrap_err();
    assert!(matches!(e, McapError::TooLarge { .. }), "{e}");
    assert_eq!(e.sqlstate(), "54000");
    let no_big_chunks = ReaderOptions {
        max_chunk_bytes: 1000,
        ..ReaderOptions::default()
    };
    let e = decode_stream(&file, || 4096, options(), no_big_chunks).unwrap_err();
    assert!(
        matches!(
            e,
            McapError::TooLarge {
                what: "uncompressed chunk",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn conflicting_redefinitions_are_refused() {
    let (mut channels, text) = imu_channels();
    let e = channels
        .add_schema(
            &brewric::ingest::mcap::SchemaRecord {
                id: 1,
                name: "sensor_msgs/msg/Imu",
                encoding: "ros2msg",
                data: b"int32 x\n",
            },
            Location::File(77),
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("offset 77") && e.to_string().contains("schema 1"),
        "{e}"
    );
    // Identical repeats (the summary repeats everything) are fine.
    channels
        .add_schema(
            &brewric::ingest::mcap::SchemaRecord {
                id: 1,
                name: "sensor_msgs/msg/Imu",
                encoding: "ros2msg",
                data: text.as_bytes(),
            },
            Location::File(78),
        )
        .unwrap();
    let e = channels
        .add_channel(
            &brewric::ingest::mcap::ChannelRecord {
                id: 1,
                schema_id: 1,
                topic: "/other",
                message_encoding: "cdr",
                metadata: vec![],
            },
            Location::File(79),
        )
        .unwrap_err();
    assert!(e.to_string().contains("channel 1"), "{e}");
    let mut decoder = Decoder::new(channels);
    let e = decoder
        .message(&message(42, 1, &[0, 1, 0, 0]), Location::File(5))
        .unwrap_err();
    assert!(
        matches!(e, McapError::UnknownChannel { channel_id: 42, .. }),
        "{e}"
    );
}

#[test]
fn invalid_utf8_and_nul_in_strings_are_repaired_and_counted() {
    let (channels, _) = imu_channels();
    let mut decoder = Decoder::new(channels);
    let mut c = Cdr::new(false);
    c.time(5);
    c.string_bytes(b"bad\xff\x00id");
    for _ in 0..4 + 9 + 3 + 9 + 3 + 9 {
        c.f64(1.0);
    }
    decoder
        .message(&message(1, 1, &c.buf), Location::File(0))
        .unwrap();
    let batches = decoder.take_batches();
    assert_eq!(batches[0].repaired_strings, 1);
    let mut got = Decoded::default();
    got.collect(batches);
    assert_eq!(got.tables["imu"][0][5], text("bad\u{FFFD}\u{FFFD}id"));
}

#[test]
fn schema_text_variants_parse() {
    // CRLF line ends, blank lines around MSG:, a 3-`=` separator, bare
    // `Header` (ROS 1 habit), Time not embedded.
    let text = "Header header\r\nint32 x # c\r\n\r\n===\r\n\r\nMSG: std_msgs/Header\r\nbuiltin_interfaces/Time stamp\r\nstring frame_id\r\n";
    let s = parse_ros2msg("p/msg/T", text).unwrap();
    assert_eq!(s.root_type().fields.len(), 2);
}

/// A rough throughput check (no assertions on time): run with
/// `cargo test --release --test mcap_decode -- --ignored --nocapture decode_speed`.
/// Prints MB/s (file bytes) and messages/s for the `mcap` crate's
/// MessageStream (which copies each message, no decoding), this module's
/// chunk walk without decoding, and full decoding into columns through the
/// summary (1 thread, and N threads) and through the stream fed 64 KiB
/// pieces; then decode-only rates per message type.
#[test]
#[ignore]
fn decode_speed() {
    use std::time::Instant;
    let defs = topics();
    // Imu 200 Hz, JointState 100 Hz, Odometry 50 Hz, LaserScan (720 beams) 10 Hz.
    let laser = |rng: &mut Rng, i: usize| {
        let t = stamp(rng, i);
        let mut c = Cdr::new(false);
        c.header(t, "laser");
        for _ in 0..7 {
            c.f32(rng.f32());
        }
        let ranges: Vec<f32> = (0..720).map(|_| rng.f32().abs()).collect();
        c.f32s(&ranges);
        c.f32s(&ranges);
        c.buf
    };
    let mut rng = Rng(1);
    let mut payloads: Vec<(usize, Vec<u8>)> = Vec::new();
    for tick in 0..200_000usize {
        payloads.push((1, imu(&mut rng, tick, false).payload));
        if tick % 2 == 0 {
            payloads.push((0, joint_state(&mut rng, tick, false).payload));
        }
        if tick % 4 == 0 {
            payloads.push((2, odometry(&mut rng, tick, false).payload));
        }
        if tick % 20 == 0 {
            payloads.push((3, laser(&mut rng, tick)));
        }
    }
    let used = [0usize, 1, 2, 3];
    let build = |compression: Option<mcap::Compression>| {
        let mut w = mcap::WriteOptions::new()
            .profile("ros2")
            .compression(compression)
            .chunk_size(Some(768 * 1024))
            .create(Cursor::new(Vec::new()))
            .unwrap();
        let mut ids = vec![0u16; defs.len()];
        for &k in &used {
            let s = w
                .add_schema(defs[k].schema_name, "ros2msg", defs[k].schema.as_bytes())
                .unwrap();
            ids[k] = w.add_channel(s, defs[k].topic, "cdr", &qos()).unwrap();
        }
        for (i, (k, p)) in payloads.iter().enumerate() {
            w.write_to_known_channel(
                &mcap::records::MessageHeader {
                    channel_id: ids[*k],
                    sequence: i as u32,
                    log_time: 1_767_600_000_000_000_000 + i as u64 * 1_000_000,
                    publish_time: 1_767_600_000_000_000_000 + i as u64 * 1_000_000,
                },
                p,
            )
            .unwrap();
        }
        w.finish().unwrap();
        w.into_inner().into_inner()
    };
    let best = |runs: usize, f: &mut dyn FnMut() -> usize| {
        let mut best = f64::MAX;
        let mut n = 0;
        for _ in 0..runs {
            let t = Instant::now();
            n = f();
            best = best.min(t.elapsed().as_secs_f64());
        }
        (n, best)
    };
    let report = |what: &str, bytes: usize, messages: usize, secs: f64| {
        eprintln!(
            "{what:<52} {:>8.1} MB/s {:>10.0} msg/s",
            bytes as f64 / secs / 1e6,
            messages as f64 / secs
        );
    };
    let payload_bytes: usize = payloads.iter().map(|(_, p)| p.len()).sum();
    for (name, compression) in [("zstd", Some(mcap::Compression::Zstd)), ("none", None)] {
        let file = build(compression);
        eprintln!(
            "\n{name} chunks: file {:.1} MB, payloads {:.1} MB, {} messages",
            file.len() as f64 / 1e6,
            payload_bytes as f64 / 1e6,
            payloads.len()
        );
        let (n, secs) = best(3, &mut || {
            mcap::MessageStream::new(&file)
                .unwrap()
                .map(|m| m.unwrap().data.len())
                .filter(|&l| l > 0)
                .count()
        });
        report(
            "mcap::MessageStream (copies, no decode)",
            file.len(),
            n,
            secs,
        );
        let indexed = IndexedFile::open(&file, &ReaderOptions::default())
            .unwrap()
            .unwrap();
        let (n, secs) = best(3, &mut || {
            let mut buffer = brewric::ingest::mcap::ChunkBuffer::new();
            let mut n = 0;
            for chunk in &indexed.chunks {
                for rec in indexed.chunk_records(chunk, &mut buffer).unwrap() {
                    if let Record::Message(m) = rec.unwrap().record {
                        n += (!m.data.is_empty()) as usize;
                    }
                }
            }
            n
        });
        report(
            "brewric chunk walk (no copy, no decode)",
            file.len(),
            n,
            secs,
        );
        let channels = Channels::from_indexed(&indexed, options()).unwrap();
        let (n, secs) = best(3, &mut || {
            let mut buffer = brewric::ingest::mcap::ChunkBuffer::new();
            let mut decoder = Decoder::new(channels.clone());
            let mut rows = 0;
            for chunk in &indexed.chunks {
                for rec in indexed.chunk_records(chunk, &mut buffer).unwrap() {
                    decoder.record(&rec.unwrap()).unwrap();
                }
                for b in decoder.take_batches_over(2048, usize::MAX) {
                    rows += b.messages;
                }
            }
            rows + decoder
                .take_batches()
                .iter()
                .map(|b| b.messages)
                .sum::<usize>()
        });
        report(
            "brewric summary + decode to columns, 1 thread",
            file.len(),
            n,
            secs,
        );
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        let (n, secs) = best(3, &mut || {
            std::thread::scope(|s| {
                (0..threads)
                    .map(|w| {
                        let indexed = &indexed;
                        let channels = channels.clone();
                        s.spawn(move || {
                            let mut buffer = brewric::ingest::mcap::ChunkBuffer::new();
                            let mut decoder = Decoder::new(channels);
                            let mut rows = 0;
                            for chunk in indexed.chunks.iter().skip(w).step_by(threads) {
                                for rec in indexed.chunk_records(chunk, &mut buffer).unwrap() {
                                    decoder.record(&rec.unwrap()).unwrap();
                                }
                                for b in decoder.take_batches_over(2048, usize::MAX) {
                                    rows += b.messages;
                                }
                            }
                            rows + decoder
                                .take_batches()
                                .iter()
                                .map(|b| b.messages)
                                .sum::<usize>()
                        })
                    })
                    .collect::<Vec<_>>()
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .sum()
            })
        });
        report(
            &format!("brewric summary + decode, {threads} threads"),
            file.len(),
            n,
            secs,
        );
        let (n, secs) = best(3, &mut || {
            let mut stream = McapStream::new(ReaderOptions::default());
            let mut decoder = Decoder::new(Channels::new(options()));
            let mut rows = 0;
            for piece in file.chunks(64 * 1024) {
                stream.feed(piece);
                while let Some(rec) = stream.next_record().unwrap() {
                    decoder.record(&rec).unwrap();
                }
                for b in decoder.take_batches_over(2048, usize::MAX) {
                    rows += b.messages;
                }
            }
            assert_eq!(stream.finish(), Ending::Complete);
            rows + decoder
                .take_batches()
                .iter()
                .map(|b| b.messages)
                .sum::<usize>()
        });
        report(
            "brewric stream (64 KiB pieces) + decode",
            file.len(),
            n,
            secs,
        );
    }
    eprintln!("\ndecode only (payloads in memory), payload MB/s:");
    let channels = {
        let file = build(None);
        let indexed = IndexedFile::open(&file, &ReaderOptions::default())
            .unwrap()
            .unwrap();
        Channels::from_indexed(&indexed, options()).unwrap()
    };
    for &k in &used {
        let id = channels
            .plans()
            .iter()
            .find(|p| p.topic == defs[k].topic)
            .unwrap()
            .channel_id;
        let mine: Vec<&Vec<u8>> = payloads
            .iter()
            .filter(|(t, _)| *t == k)
            .map(|(_, p)| p)
            .collect();
        let bytes: usize = mine.iter().map(|p| p.len()).sum();
        let (n, secs) = best(3, &mut || {
            let mut decoder = Decoder::new(channels.clone());
            for (i, p) in mine.iter().enumerate() {
                decoder
                    .message(&message(id, i as u32, p), Location::File(0))
                    .unwrap();
                if decoder.buffered_rows() >= 2048 {
                    decoder.take_batches();
                }
            }
            decoder.take_batches();
            mine.len()
        });
        report(
            &format!("  {} ({} B each)", defs[k].schema_name, bytes / mine.len()),
            bytes,
            n,
            secs,
        );
    }
}

/// For profilers: decodes one message type over and over
/// (`MCAP_PROFILE_TYPE` = index into `topics()`, default Imu).
#[test]
#[ignore]
fn decode_profile() {
    let k: usize = std::env::var("MCAP_PROFILE_TYPE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let defs = topics();
    let (mut channels, _) = (Channels::new(options()), ());
    channels
        .add_schema(
            &brewric::ingest::mcap::SchemaRecord {
                id: 1,
                name: defs[k].schema_name,
                encoding: "ros2msg",
                data: defs[k].schema.as_bytes(),
            },
            Location::File(0),
        )
        .unwrap();
    channels
        .add_channel(
            &brewric::ingest::mcap::ChannelRecord {
                id: 1,
                schema_id: 1,
                topic: defs[k].topic,
                message_encoding: "cdr",
                metadata: vec![],
            },
            Location::File(0),
        )
        .unwrap();
    let mut rng = Rng(9);
    let payloads: Vec<Vec<u8>> = (0..1000)
        .map(|i| (defs[k].generate)(&mut rng, i, false).payload)
        .collect();
    let mut decoder = Decoder::new(channels);
    let started = std::time::Instant::now();
    let rounds: usize = std::env::var("MCAP_PROFILE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let batch: usize = std::env::var("MCAP_PROFILE_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    for _ in 0..rounds {
        for (i, p) in payloads.iter().enumerate() {
            decoder
                .message(&message(1, i as u32, p), Location::File(0))
                .unwrap();
            if decoder.buffered_rows() >= batch {
                decoder.take_batches();
            }
        }
    }
    let n = rounds * payloads.len();
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{}: {:.0} ns per message",
        defs[k].schema_name,
        secs * 1e9 / n as f64
    );
}
