//! Arbitrary text through the ros2msg parser and, when it parses, the
//! layout and CDR compiler and a decode of the input itself and of zeros
//! as payloads. The first line is the schema name, the rest the schema
//! text. Checks: no panic, and batches keep equal-length columns (a value kept once aside). Seeds:
//! `fuzz/seeds/ros2msg`.

#![no_main]

use brewric::ingest::mcap::{
    parse_ros2msg, ChannelRecord, Channels, DecodeOptions, Decoder, Location, MessageRecord,
    SchemaRecord,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (name, body) = text.split_once('\n').unwrap_or(("p/msg/T", &text));
    if parse_ros2msg(name, body).is_err() {
        return;
    }
    let mut channels = Channels::new(DecodeOptions::default());
    let schema = SchemaRecord {
        id: 1,
        name,
        encoding: "ros2msg",
        data: body.as_bytes(),
    };
    if channels.add_schema(&schema, Location::File(0)).is_err() {
        return;
    }
    let channel = ChannelRecord {
        id: 1,
        schema_id: 1,
        topic: "/fuzz",
        message_encoding: "cdr",
        metadata: vec![],
    };
    if channels.add_channel(&channel, Location::File(0)).is_err() {
        return;
    }
    let mut decoder = Decoder::new(channels);
    let zeros = [0u8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    for payload in [data, &zeros[..]] {
        let message = MessageRecord {
            channel_id: 1,
            sequence: 1,
            log_time: 1,
            publish_time: 1,
            data: payload,
            data_file_offset: None,
        };
        let before = decoder.buffered_rows();
        if decoder.message(&message, Location::File(0)).is_err() {
            assert_eq!(decoder.buffered_rows(), before);
        }
    }
    for batch in decoder.take_batches() {
        for t in &batch.tables {
            for (c, &once) in t.columns.iter().zip(&t.repeated) {
                // A value every row repeats is kept once, without NULLs.
                assert_eq!(c.len(), if once { 1 } else { t.rows });
                assert!(!once || c.validity.is_none());
            }
        }
    }
});
