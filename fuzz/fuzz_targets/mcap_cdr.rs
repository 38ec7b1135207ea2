//! Arbitrary bytes through the MCAP reader and the CDR decoder. The first
//! byte picks the mode: odd = the rest is an MCAP file, streamed whole and
//! in three pieces (same outcome required, buffering bounded) and read
//! through its summary; even = the rest is `u16 length, schema name, NUL,
//! ros2msg text, CDR payload`, decoded on a channel of that schema (a
//! message either adds its row or leaves every table as it was; taken
//! batches have equal-length columns, a value kept once aside). Seeds: `fuzz/seeds/mcap_cdr`.

#![no_main]

use brewric::ingest::mcap::{
    ChannelRecord, Channels, ChunkBuffer, DecodeOptions, Decoder, IndexedFile, Location,
    McapStream, MessageRecord, ReaderOptions, SchemaRecord,
};
use libfuzzer_sys::fuzz_target;

fn reader() -> ReaderOptions {
    ReaderOptions {
        max_record_bytes: 1 << 20,
        max_chunk_bytes: 1 << 20,
        verify_crcs: true,
    }
}

fn stream(file: &[u8], cuts: &[usize]) -> String {
    let mut stream = McapStream::new(reader());
    let mut decoder = Decoder::new(Channels::new(DecodeOptions::default()));
    let mut log = String::new();
    let mut taken = 0;
    for end in cuts.iter().copied().chain([file.len()]) {
        stream.feed(&file[taken..end]);
        taken = end;
        loop {
            match stream.next_record() {
                Ok(Some(rec)) => {
                    if let Err(e) = decoder.record(&rec) {
                        log.push_str(&format!("{e}\n"));
                    }
                }
                Ok(None) => break,
                Err(e) => return format!("{log}{e}"),
            }
        }
        assert!(stream.buffered() <= 4 * (1 << 20) + file.len());
    }
    format!(
        "{log}rows {} {:?}",
        decoder.buffered_rows(),
        stream.finish()
    )
}

fn container(control: u8, file: &[u8]) {
    let a = (control as usize * 131) % (file.len() + 1);
    let b = (a + file.len() / 3) % (file.len() + 1);
    let cuts = [a.min(b), a.max(b)];
    assert_eq!(stream(file, &[]), stream(file, &cuts), "cuts {cuts:?}");
    if let Ok(Some(indexed)) = IndexedFile::open(file, &reader()) {
        let _ = indexed.verify_data_crc();
        if let Ok(channels) = Channels::from_indexed(&indexed, DecodeOptions::default()) {
            let mut buffer = ChunkBuffer::new();
            let mut decoder = Decoder::new(channels);
            for chunk in &indexed.chunks {
                if let Ok(records) = indexed.chunk_records(chunk, &mut buffer) {
                    for rec in records {
                        let Ok(rec) = rec else { break };
                        let _ = decoder.record(&rec);
                    }
                }
            }
            check(&mut decoder);
        }
    }
}

fn check(decoder: &mut Decoder) {
    for batch in decoder.take_batches() {
        for t in &batch.tables {
            for (c, &once) in t.columns.iter().zip(&t.repeated) {
                // A value every row repeats is kept once, without NULLs.
                assert_eq!(c.len(), if once { 1 } else { t.rows });
                assert!(!once || c.validity.is_none());
            }
        }
    }
}

fn payload(control: u8, input: &[u8]) {
    let Some((len, rest)) = input.split_first_chunk::<2>() else {
        return;
    };
    let len = (u16::from_le_bytes(*len) as usize).min(rest.len());
    let (head, payload) = rest.split_at(len);
    let Some(nul) = head.iter().position(|&b| b == 0) else {
        return;
    };
    let Ok(name) = std::str::from_utf8(&head[..nul]) else {
        return;
    };
    let mut channels = Channels::new(DecodeOptions {
        recording: "fuzz".into(),
        blob_threshold: (control & 4 != 0).then_some(8),
    });
    let schema = SchemaRecord {
        id: 1,
        name,
        encoding: "ros2msg",
        data: &head[nul + 1..],
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
    for cut in [payload.len(), payload.len() / 2, 4] {
        let data = &payload[..cut.min(payload.len())];
        let before = decoder.buffered_rows();
        let message = MessageRecord {
            channel_id: 1,
            sequence: 1,
            log_time: 1,
            publish_time: 2,
            data,
            data_file_offset: None,
        };
        match decoder.message(&message, Location::File(0)) {
            Ok(()) => assert!(decoder.buffered_rows() > before),
            Err(_) => assert_eq!(decoder.buffered_rows(), before),
        }
    }
    check(&mut decoder);
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    if control & 1 == 1 {
        container(control, rest);
    } else {
        payload(control, rest);
    }
});
